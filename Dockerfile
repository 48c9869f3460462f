# syntax=docker/dockerfile:1
# Convoy control plane image: docker build -t convoy:dev .
# Build stage: full toolchain, dev dependencies, TypeScript compile, then drop dev dependencies.
FROM node:24-bookworm AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts/gen-types.js scripts/
COPY protos protos
COPY src src
# tsconfig also includes test/, e2e/ and bench/; they are not in the build context, so only
# src/ is compiled.
RUN npm run build \
  && npm prune --omit=dev --no-audit --no-fund \
  && chmod 0755 dist/src/cli/main.js

# Runtime stage: Node only, production dependencies, compiled JavaScript and the proto manifest.
FROM node:24-bookworm-slim
ENV NODE_ENV=production
# glibc raises its mmap threshold after large Buffers are freed, then serves the next ones from
# its heap and keeps that memory: a fixed threshold returns them to the OS (src/runtime/memory.ts;
# 1,000 streams: RSS 907 → 671 MiB measured).
ENV MALLOC_MMAP_THRESHOLD_=131072
# One arena per allocating thread keeps each thread's share of the cold start's peak; two arenas
# hold less (src/runtime/memory.ts; 5,000 ListenerSets, 200 Envoys: steady RSS 852 → 784 MiB).
ENV MALLOC_ARENA_MAX=2
# V8 grows its young generation to 2 × 64 MiB during a cold start and keeps it resident; 2 × 16
# MiB is enough for a control plane (src/runtime/memory.ts; 5,000 ListenerSets, 200 Envoys:
# steady RSS ~100 MiB lower).
ENV NODE_OPTIONS=--max-semi-space-size=16
WORKDIR /app
COPY --from=build /src/package.json /src/package-lock.json ./
COPY --from=build /src/node_modules node_modules
COPY --from=build /src/dist/src dist/src
COPY --from=build /src/protos protos
# The fleet page's files (docs/operations.md §19), served by the admin server.
COPY web web
RUN ln -s /app/dist/src/cli/main.js /usr/local/bin/convoy
# The default xDS certificate folder (convoy serve --xds-certs-dir, convoy certgen), owned by the
# runtime user so empty named volumes mounted on its sub-folders start writable by it
# (docker-compose.yml); the CA's folder is private.
ENV XDG_STATE_HOME=/var/lib
RUN mkdir -p /var/lib/convoy/xds-pki/ca /var/lib/convoy/xds-pki/server /var/lib/convoy/xds-pki/gateways \
  && chmod 0700 /var/lib/convoy/xds-pki/ca && chown -R 10001:10001 /var/lib/convoy
# A fixed numeric non-root user (deploy/ sets runAsUser: 10001 to match).
USER 10001:10001
EXPOSE 18000 9090
ENTRYPOINT ["convoy"]
CMD ["--help"]
