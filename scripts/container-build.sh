#!/usr/bin/env bash
# The install and build steps of the container image, shared by the Dockerfile (one step per
# layer, so a source change does not reinstall the dependencies) and CI (which has no Docker
# engine and runs them all in a copy of the repository).
#
#   scripts/container-build.sh deps    npm ci from the lockfile (dev dependencies included: the build needs tsc)
#   scripts/container-build.sh build   compile to dist/ and keep only the production dependencies
#   scripts/container-build.sh all     both
set -euo pipefail
cd "$(dirname "$0")/.."

deps() {
  npm ci --no-audit --no-fund
}

build() {
  npm run build
  npm prune --omit=dev --no-audit --no-fund
  # What the image starts must load from dist/ and the production dependencies alone.
  node dist/cli/main.js --help >/dev/null
  # The inspection worker must start from dist/ alone (no tsx once the dev dependencies are gone).
  node --input-type=module -e "
    const { Inspector } = await import('./dist/pipeline/isolate/inspector.js');
    const inspector = new Inspector({ workers: 1 });
    const opts = { path: 'a.csv', fileName: 'a.csv', inputSourceType: 'DATA_FILE', maxBytes: 64, bytes: Buffer.from('a,b\\n1,2\\n') };
    const answer = await inspector.run('inspectFile', 'a.csv', opts);
    await inspector.close();
    if (!answer.ok) throw new Error(answer.reason);"
}

case "${1:-all}" in
  deps) deps ;;
  build) build ;;
  all) deps && build ;;
  *) echo "usage: $0 [deps|build|all]" >&2; exit 2 ;;
esac
