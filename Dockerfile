# docex-agent container image. The exact `docker run` (configuration, credentials, state and folder
# mounts) is in docs/operations.md, "Container":
#   docker build -t docex-agent .
#   docker run -d --name docex-agent --group-add "$(getent group docex-agent | cut -d: -f3)" \
#     -v /etc/docex-agent/agent.yaml:/etc/docex-agent/agent.yaml:ro \
#     -v /etc/docex-agent/container-credentials:/etc/docex-agent/credentials:ro \
#     -e CREDENTIALS_DIRECTORY=/etc/docex-agent/credentials \
#     -v docex-state:/var/lib/docex-agent -v /srv/docex:/srv/docex docex-agent
# The configuration is the systemd service's (systemd/README.md): stateDir /var/lib/docex-agent,
# folders and outputs under /srv/docex, secrets as ${credential:NAME} and TLS files as
# ${env:CREDENTIALS_DIRECTORY}/NAME, here a copy of the credential files owned by uid 10001. The
# install and build steps live in scripts/container-build.sh, which CI runs too.

# The base: Node.js 24 LTS on Debian 13 (trixie) slim, pinned to an exact release. For a build that
# cannot change under you, pin it by digest too, and refresh both when a Node.js or Debian security
# release comes out:
#   docker buildx imagetools inspect node:24.21.0-trixie-slim    (prints "Digest: sha256:…")
#   docker build --build-arg NODE_IMAGE=node:24.21.0-trixie-slim@sha256:<that digest> -t docex-agent .
# test/ops/dockerfile.test.ts accepts the tag alone or tag@sha256:<64 hex digits> here.
ARG NODE_IMAGE=node:24.21.0-trixie-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /build
COPY package.json package-lock.json ./
COPY scripts/container-build.sh scripts/
RUN scripts/container-build.sh deps
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# Compiles, drops the dev and optional dependencies and every file of the rest that does not run
# here (type declarations, source maps, SQLite sources, other platforms' binaries).
RUN scripts/container-build.sh build

# Only what runs: Node.js (the base), package.json, dist/ and the production dependencies.
FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    CREDENTIALS_DIRECTORY=/etc/docex-agent/credentials
RUN groupadd --system --gid 10001 docex \
 && useradd --system --uid 10001 --gid docex --home-dir /var/lib/docex-agent --shell /usr/sbin/nologin docex \
 && mkdir -p /var/lib/docex-agent /srv/docex /etc/docex-agent \
 && chown docex:docex /var/lib/docex-agent /srv/docex \
 && chmod 0700 /var/lib/docex-agent \
 && chmod 2770 /srv/docex
WORKDIR /opt/docex-agent
COPY --from=build /build/package.json ./
COPY --from=build /build/node_modules ./node_modules
COPY --from=build /build/dist ./dist
USER docex
VOLUME ["/var/lib/docex-agent", "/srv/docex"]
# Liveness only: /healthz of the ops endpoints (ops.listen, 127.0.0.1:9464 by default: the check
# runs inside the container) answers while the process lives and serves. Readiness (/readyz:
# token, API, folders) is the orchestrator's to ask: an outage of the remote service must not
# mark the container unhealthy, nor restart it. node itself asks: the slim image has no curl.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:9464/healthz',{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "--max-semi-space-size=4", "--single-threaded-gc", "--expose-gc", "--v8-pool-size=1", "--no-memory-reducer", "/opt/docex-agent/dist/cli/main.js"]
CMD ["start", "--config", "/etc/docex-agent/agent.yaml"]
