# syntax=docker/dockerfile:1
# The rollout-verify image: the GitHub Action runs it (runs.image: Dockerfile); Argo and GitLab
# use the published image. The base is pinned by version tag and by the digest of its
# multi-architecture index; bump both together.
ARG PYTHON_IMAGE=python:3.11.14-slim-bookworm@sha256:65a93d69fa75478d554f4ad27c85c1e69fa184956261b4301ebaf6dbb0a3543d

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
RUN python -m venv /opt/venv
COPY requirements.lock /tmp/requirements.lock
# Every package and every hash is pinned: pip refuses anything not in the lock.
RUN /opt/venv/bin/pip install --require-hashes --no-deps --only-binary=:all: -r /tmp/requirements.lock \
    && /opt/venv/bin/pip check

FROM ${PYTHON_IMAGE}
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="rollout-verify" \
      org.opencontainers.image.description="Prove a Kubernetes rollout delivered its configuration to every pod" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.base.name="docker.io/library/python:3.11.14-slim-bookworm"
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONPATH=/opt/rollout-verify \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1
COPY --from=build /opt/venv /opt/venv
COPY verify /opt/rollout-verify/verify
# Compiled once here: with PYTHONDONTWRITEBYTECODE nothing is written at run time, so every start
# would compile the sources again (~20 ms of each run).
RUN python -m compileall -q /opt/rollout-verify/verify
# No USER: GitHub runs container actions as root so they can write the mounted workspace.
# The Argo and GitLab examples run it as a non-root user (65532) via their securityContext.
ENTRYPOINT ["python", "-m", "verify"]
