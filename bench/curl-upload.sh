#!/usr/bin/env bash
# What a sysadmin would write: one token, then per file a create (curl + jq) and a `curl -T`,
# $P files at a time with xargs. File paths on stdin; prints "<name> <epoch ms>" per uploaded file.
# Env: CA CERT KEY API AUTH WF CLIENT_ID SECRET_FILE APIKEY_FILE WORK P. Secrets stay in files.
set -euo pipefail
umask 077
hdr="$WORK/curl-headers"
token=$(curl -sS --fail --cacert "$CA" --cert "$CERT" --key "$KEY" \
  --data-urlencode grant_type=client_credentials --data-urlencode "client_id=$CLIENT_ID" \
  --data-urlencode "client_secret@$SECRET_FILE" "$AUTH/oauth2/token" | jq -r .access_token)
{
  printf 'x-api-key: %s\n' "$(cat "$APIKEY_FILE")"
  printf 'authorization: Bearer %s\n' "$token"
} >"$hdr"
export hdr
one() {
  local f=$1 name url
  name=$(basename "$f")
  url=$(curl -sS --fail --cacert "$CA" --cert "$CERT" --key "$KEY" -H @"$hdr" \
    -H 'content-type: application/json' --data "{\"workflowId\":\"$WF\",\"filename\":\"$name\"}" \
    "$API/jobs/single-file" | jq -r .fileUploadUrl)
  curl -sS --fail --cacert "$CA" -T "$f" "$url" -o /dev/null
  echo "$name $(date +%s%3N)"
}
export -f one
xargs -P "$P" -n 1 bash -c 'one "$1"' _
