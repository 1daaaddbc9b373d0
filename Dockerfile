# Multi-stage build of akkd and akk. cgo is on for SQLite.
# The daemon drives tmux panes, so run it where those panes live: mount the
# tmux socket directory and the agents' homes into the container, or run the
# binary on the host.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=1 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/akkd ./cmd/akkd \
 && CGO_ENABLED=1 go build -trimpath -ldflags "-s -w" -o /out/akk ./cmd/akk

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends tmux ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 10001 akk \
 && mkdir -p /var/lib/akk && chown akk:akk /var/lib/akk && chmod 700 /var/lib/akk
COPY --from=build /out/akkd /out/akk /usr/local/bin/
USER akk
# Loopback by default, as on a workstation: AKK types into terminals, so it
# is exposed beyond the container only on purpose (-e AKK_LISTEN=0.0.0.0:7788).
ENV AKK_STATE_DIR=/var/lib/akk AKK_LISTEN=127.0.0.1:7788
VOLUME ["/var/lib/akk"]
EXPOSE 7788
ENTRYPOINT ["/usr/local/bin/akkd"]
