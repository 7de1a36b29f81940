# The Action Gate companion as a container image (README: "Run it as a service").
#   docker build -t action-gate .
#   docker run --init -p 127.0.0.1:8787:8787 -v action-gate-data:/data action-gate
# Without a container registry, make the base locally (Debian packages and the npm registry
# only) and name it: node deploy/make-base-image.mjs, then
#   docker build --build-arg BASE_IMAGE=action-gate-base:bookworm-node20.20.2-npm11.19.1 -t action-gate .
# `npm run test:container` does both and smoke-tests the image.
ARG BASE_IMAGE=node:20-bookworm-slim

# Build stage: compilers for the native addons of better-sqlite3 and pkcs11js (used when no
# prebuilt binary matches), TypeScript, and the dev dependencies. None of it reaches the runtime
# image.
FROM ${BASE_IMAGE} AS build
WORKDIR /app
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# Scripts wait until the sources are here: `prepare` builds them.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY shared ./shared
COPY companion ./companion
COPY console ./console
# --ignore-scripts skipped every install script: the native addons are built here (each
# production package with an install script; test/companion/deploy.test.ts checks the list),
# and the fixes to installed dependencies (`postinstall`) run here.
RUN npm rebuild better-sqlite3 pkcs11js \
 && node scripts/patch-dependencies.mjs \
 && npm run build \
 && npm prune --omit=dev --ignore-scripts --no-audit --no-fund

# Runtime stage: node, the production dependencies and the build; runs as the image's
# unprivileged `node` user with its data on a volume.
FROM ${BASE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8787 \
    SVC_DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
RUN mkdir -p /data && chown node:node /data && chmod 0700 /data
USER node
VOLUME ["/data"]
EXPOSE 8787
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8787) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The companion drains in-flight requests on SIGTERM (SVC_SHUTDOWN_GRACE_MS, 10 s by default);
# give `docker stop` longer than that: docker stop -t 15.
STOPSIGNAL SIGTERM
CMD ["node", "--max-semi-space-size=8", "dist/companion/main.js"]
