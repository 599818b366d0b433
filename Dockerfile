# The dcops OpenEnv server as a container: `docker build -t dcops . && docker run -p 8000:8000 dcops`.
# The runtime only (numpy, scipy, gymnasium, pettingzoo, fastapi, uvicorn): no torch, no LLM stack; the shipped
# policies run on numpy. `openenv validate .` builds it and plays validation/runtime.json over the WebSocket.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 \
    DCOPS_DB=/data/episodes.db DCOPS_WORKERS=2
WORKDIR /opt/dcops
COPY . /opt/dcops
RUN pip install --no-cache-dir . && useradd --create-home dcops && mkdir -p /data && chown dcops /data
USER dcops
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/health', timeout=4)"
CMD ["dcops", "serve", "--host", "0.0.0.0", "--port", "8000"]
