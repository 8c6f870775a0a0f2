#!/usr/bin/env bash
# What a sysadmin would write for the return path: one token, list (curl + jq, page by page), then
# per document a download-URL request (curl + jq) and a `curl -o`, $P at a time with xargs.
# MODE=proofs: the DELIVERY_PROOF and SUBMISSION_REPORT of every final sending event of job $JOB.
# MODE=peppol: every incoming Peppol document's XML.
# At most $LIMIT documents; prints "<id> <epoch ms>" per saved document into stdout.
# Env: MODE JOB CA CERT KEY API AUTH CLIENT_ID SECRET_FILE APIKEY_FILE WORK OUT P LIMIT.
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
api() { curl -sS --fail --cacert "$CA" --cert "$CERT" --key "$KEY" -H @"$hdr" "$API$1"; }
export -f api

list="$WORK/curl-list"
: >"$list"
after=""
while :; do
  if [ "$MODE" = proofs ]; then
    page=$(api "/sending-events?jobId=$JOB&maxItems=1000${after:+&after=$after}")
    jq -r '.items[] | select(.businessStatus == "SUCCESS" or .businessStatus == "FAILURE" or .businessStatus == "REJECTED")
      | .id as $e | .documents[] | select(.type == "DELIVERY_PROOF" or .type == "SUBMISSION_REPORT")
      | "\($e) \(.fileReference) \(.type)"' <<<"$page" >>"$list"
  else
    page=$(api "/peppol-incoming-documents?sortField=createdAt&sortOrder=asc&maxItems=100${after:+&after=$after}")
    jq -r '.items[] | "\(.senderId) \(.id) xml"' <<<"$page" >>"$list"
  fi
  [ "$(jq '.items | length' <<<"$page")" -gt 0 ] || break
  after=$(jq -r '.items[-1].id' <<<"$page")
done

one() {
  local url
  if [ "$MODE" = proofs ]; then
    url=$(api "/sending-events/$1/files/$2/download-url" | jq -r .url)
    curl -sS --fail --cacert "$CA" -o "$OUT/$1-$3.pdf" "$url"
    echo "$1-$3 $(date +%s%3N)"
  else
    url=$(api "/peppol-incoming-documents/sender/$1/document/$2/download-url" | jq -r .url)
    curl -sS --fail --cacert "$CA" -o "$OUT/$2.xml" "$url"
    echo "$2 $(date +%s%3N)"
  fi
}
export -f one
export MODE OUT CA CERT KEY API
head -n "$LIMIT" "$list" | xargs -P "$P" -n 3 bash -c 'one "$@"' _
