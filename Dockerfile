# syntax=docker/dockerfile:1
# Brier: one image for both roles. `node src/main.ts` is a gateway by default (public API, control
# plane, console and docs on :8080) and an inference worker with BRIER_ROLE=worker (internal, :9090).
# The embedded model (models/brier-lite, models/all-MiniLM-L6-v2 and the USE-lite encoder from npm) is inside the image.
# Build: docker build -t brier .        Node 24 runs TypeScript by type stripping: no compile step.

ARG NODE_IMAGE=node:24-bookworm-slim

# 1. Every dependency, to build the web console and the documentation site (Vite, VitePress).
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Install scripts are off: the base image brings Node 24, and node-llama-cpp uses its prebuilt binaries.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
RUN npm run -s build

# 2. Production dependencies only.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

# 3. The runtime: sources, the model, the built sites; no compilers, no dev dependencies; not root.
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    BRIER_DATA_DIR=/data
WORKDIR /app
COPY --from=deps --chown=root:root /app/node_modules ./node_modules
COPY --chown=root:root package.json ./
COPY --chown=root:root src ./src
COPY --chown=root:root models ./models
COPY --from=build --chown=root:root /app/dist ./dist
# The data dir (SQLite, pulled models, the generated dev secret) is the only writable path.
RUN mkdir -p /data && chown 1000:1000 /data
USER 1000:1000
EXPOSE 8080 9090
VOLUME ["/data"]
# Orchestrators probe /healthz themselves (compose, Kubernetes); this is for plain `docker run`.
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "src/main.ts"]
