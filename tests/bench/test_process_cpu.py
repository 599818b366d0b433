"""The server benchmark's CPU accounting: a process tree's CPU seconds include its children's."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from dcops.bench.server_bench import process_tree_cpu_s

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="reads Linux's /proc")


def test_a_busy_child_counts_in_its_parents_tree_and_a_gone_process_is_none():
    start = process_tree_cpu_s(os.getpid())
    own_start = time.process_time()
    child = subprocess.Popen([sys.executable, "-c",
                              "import time\nend = time.process_time() + 0.5\nwhile time.process_time() < end: pass\n"
                              "print('done', flush=True)\ntime.sleep(30)"], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "done"  # the child has burnt its 0.5 s of CPU and is alive
        tree = process_tree_cpu_s(os.getpid()) - start
        own = time.process_time() - own_start
        assert tree >= own + 0.45  # this process's own time, plus the child's half second
        assert process_tree_cpu_s(child.pid) >= 0.45
    finally:
        child.kill()
        child.wait()
    assert process_tree_cpu_s(child.pid) is None
