# syntax=docker/dockerfile:1
# Build: docker build --build-arg VERSION=$(git describe --tags --always) \
#          --build-arg REVISION=$(git rev-parse HEAD) -t ocl_exporter .
# Lint:  make lint-dockerfile (BuildKit's build checks, no engine needed).
# No engine: make image writes the same image (FROM scratch) as an OCI
# layout with tools/image, whose test checks that the two agree.

# The build stage runs on the builder's platform and cross-compiles: a pure
# Go static binary needs no emulation for another architecture.
# build compiles the static ocl_exporter binary.
FROM --platform=$BUILDPLATFORM docker.io/library/golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG TARGETOS=linux
ARG TARGETARCH
ARG VERSION=dev
ARG REVISION=unknown
ARG BRANCH=unknown
RUN GOOS="${TARGETOS}" GOARCH="${TARGETARCH}" \
    make build VERSION="${VERSION}" REVISION="${REVISION}" BRANCH="${BRANCH}"

# A static binary needs no libc: distroless static, non-root (uid 65532;
# numeric, so Kubernetes can verify runAsNonRoot). OpenShift's restricted
# SCC runs it under another non-root uid, which works too: the exporter
# writes no files.
FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=dev
ARG REVISION=unknown
LABEL org.opencontainers.image.title="ocl_exporter" \
      org.opencontainers.image.description="Prometheus exporter for OpenShift On-Cluster Layering" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
COPY --from=build /src/bin/ocl_exporter /usr/bin/ocl_exporter
USER 65532:65532
EXPOSE 29100
ENTRYPOINT ["/usr/bin/ocl_exporter"]
