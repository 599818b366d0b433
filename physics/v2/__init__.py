"""Plant v2: the plant-side controls and physics a learned cooling controller can exploit.

Every equation is written once, as a function over a numeric backend (:mod:`dcops.physics.v2.backend`): Python
floats for one plant (fast for a handful of zones) or numpy arrays for batches, so the two paths cannot drift
apart. Plant v0 (:mod:`dcops.physics.plant`) is unchanged and stays reproducible.

Modules: ``backend`` (the two numeric backends), ``chiller`` (lift-based variable-speed chiller),
``tower`` (variable-speed cooling tower, YorkCalc approach), ``coil`` (ε-NTU chilled-water coil),
``servers`` (server fan and leakage power against inlet temperature), ``storage`` (a mixed chilled-water tank),
``tariff`` (time-of-use prices), ``types`` (configuration, state, control, outputs, the per-episode airflow
uncertainty), ``plant`` (the step), ``interface`` (set-point and telemetry vectors). Forecasts with error, shared
with any plant, are :mod:`dcops.physics.forecast`.
"""
