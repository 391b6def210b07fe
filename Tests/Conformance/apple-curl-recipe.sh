#!/usr/bin/env bash
# Apple's documented command-line recipe ("Sending push notifications using command-line tools"):
# a provider token made with openssl (DER signature), a push sent with curl --http2.
# Environment: TEAM_ID AUTH_KEY_ID TOKEN_KEY_FILE_NAME TOPIC DEVICE_TOKEN APNS_HOST_NAME CA_FILE
# (CA_FILE is the only addition: the fake's root instead of Apple's.)
set -euo pipefail
JWT_ISSUE_TIME=$(date +%s)
JWT_HEADER=$(printf '{ "alg": "ES256", "kid": "%s" }' "${AUTH_KEY_ID}" | openssl base64 -e -A | tr -- '+/' '-_' | tr -d =)
JWT_CLAIMS=$(printf '{ "iss": "%s", "iat": %d }' "${TEAM_ID}" "${JWT_ISSUE_TIME}" | openssl base64 -e -A | tr -- '+/' '-_' | tr -d =)
JWT_HEADER_CLAIMS="${JWT_HEADER}.${JWT_CLAIMS}"
JWT_SIGNED_HEADER_CLAIMS=$(printf "${JWT_HEADER_CLAIMS}" | openssl dgst -binary -sha256 -sign "${TOKEN_KEY_FILE_NAME}" | openssl base64 -e -A | tr -- '+/' '-_' | tr -d =)
AUTHENTICATION_TOKEN="${JWT_HEADER}.${JWT_CLAIMS}.${JWT_SIGNED_HEADER_CLAIMS}"
curl --silent --show-error --dump-header - --cacert "${CA_FILE}" \
    --header "apns-topic: ${TOPIC}" --header "apns-push-type: alert" \
    --header "authorization: bearer ${AUTHENTICATION_TOKEN}" \
    --data '{"aps":{"alert":"test"}}' --http2 "https://${APNS_HOST_NAME}/3/device/${DEVICE_TOKEN}"
