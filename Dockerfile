# One image for every Tether app; the command picks the app:
#   node dist/apps/api/src/main.js | dist/apps/session-router/src/main.js |
#   dist/apps/history/src/main.js  | dist/apps/edge-connector/src/main.js
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run prisma:generate && npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/prisma ./prisma
COPY --from=build /app/scripts ./scripts
# Edges run as an ordinary account: the Codex driver refuses root by default.
RUN useradd --create-home --uid 10001 tether && mkdir -p /var/lib/tether-edge && chown tether /var/lib/tether-edge
USER tether
CMD ["node", "dist/apps/api/src/main.js"]
