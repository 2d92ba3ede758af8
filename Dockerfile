# syntax=docker/dockerfile:1
# Two stages: the first compiles better-sqlite3, installs every dependency and compiles the bot to
# dist/ (esbuild); the second takes only what the bot runs with (dist/ and the runtime
# dependencies), as a non-root user, with its database on a volume.

FROM node:22-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 builds from source when no prebuilt binary can be fetched.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts ./scripts
COPY src ./src
COPY commands ./commands
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:22-bookworm-slim
ENV NODE_ENV=production \
    DATA_DIR=/data \
    HTTP_PORT=9464 \
    HTTP_HOST=0.0.0.0
WORKDIR /app
RUN groupadd --system bot \
 && useradd --system --gid bot --home-dir /app --shell /usr/sbin/nologin bot \
 && mkdir /data && chown bot:bot /data
COPY --from=build --chown=root:root /app/package.json /app/
COPY --from=build --chown=root:root /app/node_modules /app/node_modules
COPY --from=build --chown=root:root /app/dist /app/dist
USER bot
VOLUME ["/data"]
EXPOSE 9464
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+process.env.HTTP_PORT+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM (docker stop) lets the bot finish the replies and the alert send in flight.
STOPSIGNAL SIGTERM
CMD ["node", "--max-semi-space-size=4", "--max-old-space-size=256", "dist/main.js"]
