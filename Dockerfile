# One Dockerfile, one target per app; build each with its target:
#   docker build --target api            -t tether-api .
#   docker build --target session-router -t tether-session-router .
#   docker build --target history        -t tether-history .      (also runs the migrations)
#   docker build --target edge           -t tether-edge .         (the only image with Codex)
#   docker build --target demo-edge      -t tether-demo-edge .    (docker-compose's demo edges)
# Every image installs `npm ci --omit=dev --omit=optional`: no dev tools and no agent CLIs
# (package.json "optionalDependencies"); the edge adds Codex alone. Every image runs as uid 10001
# under tini.
#
# Base: the official node image, Node 24.21.0 on Debian bookworm slim, pinned by the digest of its
# multi-architecture index. Verify or refresh it with
#   docker buildx imagetools inspect node:24.21.0-bookworm-slim
# and pass another with --build-arg NODE_IMAGE=node:<tag>@sha256:<digest> (docs/operations.md).
ARG NODE_IMAGE=node:24.21.0-bookworm-slim@sha256:2fe369e969550cde8e867afc3fe370b260140cab4a23d467074295b42163d553

# ---- build: compile everything once -----------------------------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run prisma:generate && npm run build

# ---- runtime dependencies ---------------------------------------------------------------------
FROM ${NODE_IMAGE} AS deps-service
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund && npm cache clean --force

# The edge's one agent CLI beside the same runtime dependencies: Codex at the version package.json
# names, in its own prefix (a plain `npm ci --omit=dev` would also bring every optional peer, such
# as the Prisma CLI, into the edge image).
FROM ${NODE_IMAGE} AS deps-edge
COPY package.json /tmp/package.json
RUN version="$(node -p "require('/tmp/package.json').optionalDependencies['@openai/codex']")" \
  && npm install --prefix /opt/codex --no-save --no-audit --no-fund "@openai/codex@${version}" \
  && npm cache clean --force

# ---- what every runtime image shares ----------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
# tini is PID 1: it forwards SIGTERM to node and reaps orphans (Codex children on the edge).
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/* \
  && groupadd --gid 10001 tether \
  && useradd --uid 10001 --gid 10001 --create-home --shell /usr/sbin/nologin tether
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/scripts/healthcheck.mjs ./scripts/healthcheck.mjs
COPY --from=build /app/dist/libs ./dist/libs
ENTRYPOINT ["/usr/bin/tini", "--"]
STOPSIGNAL SIGTERM
# /healthz on the ops port (TETHER_METRICS_PORT, set per image below).
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 CMD ["node", "scripts/healthcheck.mjs"]
USER 10001:10001

FROM runtime AS api
COPY --from=deps-service /app/node_modules ./node_modules
COPY --from=build /app/dist/apps/api ./dist/apps/api
ENV TETHER_METRICS_PORT=9464
EXPOSE 8080 9464
CMD ["node", "dist/apps/api/src/main.js"]

FROM runtime AS session-router
COPY --from=deps-service /app/node_modules ./node_modules
COPY --from=build /app/dist/apps/session-router ./dist/apps/session-router
ENV TETHER_METRICS_PORT=9465
EXPOSE 9465
CMD ["node", "dist/apps/session-router/src/main.js"]

FROM runtime AS history
COPY --from=deps-service /app/node_modules ./node_modules
COPY --from=build /app/dist/apps/history ./dist/apps/history
COPY --from=build /app/dist/prisma ./dist/prisma
# The migrations Job runs `node scripts/migrate.mjs deploy` in this image.
COPY --from=build /app/prisma/schema.prisma ./prisma/schema.prisma
COPY --from=build /app/prisma/migrations ./prisma/migrations
COPY --from=build /app/scripts/migrate.mjs ./scripts/migrate.mjs
ENV TETHER_METRICS_PORT=9466
EXPOSE 9466
CMD ["node", "dist/apps/history/src/main.js"]

FROM runtime AS edge
COPY --from=deps-service /app/node_modules ./node_modules
COPY --from=deps-edge /opt/codex /opt/codex
COPY --from=build /app/dist/apps/edge-connector ./dist/apps/edge-connector
# Codex is found on PATH. Ops endpoints on loopback only: the health check reads them, nothing else can.
ENV PATH=/opt/codex/node_modules/.bin:$PATH \
  TETHER_METRICS_PORT=9467 TETHER_METRICS_HOST=127.0.0.1 TETHER_EDGE_DATA_DIR=/var/lib/tether-edge
USER root
RUN mkdir -p /var/lib/tether-edge && chown 10001:10001 /var/lib/tether-edge
USER 10001:10001
VOLUME ["/var/lib/tether-edge"]
CMD ["node", "dist/apps/edge-connector/src/main.js"]

# docker-compose's demo edges: the edge image plus the stack script that enrolls it.
FROM edge AS demo-edge
COPY --from=build /app/package-lock.json ./package-lock.json
COPY --from=build /app/dist/scripts ./dist/scripts
COPY --from=build /app/dist/test/support ./dist/test/support
CMD ["node", "dist/scripts/stack/demo-edge.js"]
