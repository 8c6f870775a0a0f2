#!/usr/bin/env bash
# The install and build steps of the container image, shared by the Dockerfile (one step per
# layer, so a source change does not reinstall the dependencies) and CI (which has no Docker
# engine and runs them all in a copy of the repository).
#
#   scripts/container-build.sh deps    npm ci from the lockfile (dev dependencies included: the build needs tsc)
#   scripts/container-build.sh build   compile to dist/, keep only the production dependencies, and
#                                      only the files of them that run here (see slim)
#   scripts/container-build.sh all     both
set -euo pipefail
cd "$(dirname "$0")/.."

deps() {
  npm ci --no-audit --no-fund
}

build() {
  npm run build
  # Optional dependencies are ssh2's cpu-features (and what builds it): an optional speed-up that
  # needs a compiler, which neither the image nor the guide installs.
  npm prune --omit=dev --omit=optional --no-audit --no-fund
  slim
  # What the image starts must load from dist/ and the production dependencies alone, the SQLite
  # driver included.
  node dist/cli/main.js --help >/dev/null
  node -e "new (require('better-sqlite3'))(':memory:').prepare('select 1').get()"
  # The inspection worker must start from dist/ alone (no tsx once the dev dependencies are gone).
  node --input-type=module -e "
    const { Inspector } = await import('./dist/pipeline/isolate/inspector.js');
    const inspector = new Inspector({ workers: 1 });
    const opts = { path: 'a.csv', fileName: 'a.csv', inputSourceType: 'DATA_FILE', maxBytes: 64, bytes: Buffer.from('a,b\\n1,2\\n') };
    const answer = await inspector.run('inspectFile', 'a.csv', opts);
    await inspector.close();
    if (!answer.ok) throw new Error(answer.reason);"
}

# Files of the production dependencies that nothing loads at run time: type declarations, source
# maps, sources and build files of the SQLite driver (its SQLite sources alone are 9.9 MB) and its
# prebuilt binaries for other platforms, the bundles pdf-lib ships beside the CommonJS build Node
# loads, TypeScript sources, a test suite.
slim() {
  local m=node_modules
  find "$m" -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' \) -delete
  rm -rf "$m/better-sqlite3/deps" "$m/better-sqlite3/src" "$m/better-sqlite3/build" \
    "$m/better-sqlite3/binding.gyp" "$m/node-addon-api"
  local platform
  platform=$(node -p 'process.platform + "-" + process.arch')
  find "$m/better-sqlite3/prebuilds" -type f ! -name "$platform.node" ! -name "${platform/linux/linuxmusl}.node" -delete
  rm -rf "$m/pdf-lib/dist" "$m/pdf-lib/es" "$m/pdf-lib/ts3.4" "$m/pdf-lib/src" "$m/zod/src" "$m/bintrees/test"
}

case "${1:-all}" in
  deps) deps ;;
  build) build ;;
  all) deps && build ;;
  *) echo "usage: $0 [deps|build|all]" >&2; exit 2 ;;
esac
