extension Scaffold {
    /// The shell app `harness init --language shell` writes: Bash, socat for the Unix socket and curl for
    /// Parse, every line of the device protocol written out as it goes over the wire.
    static let shellApp = #"""
        #!/usr/bin/env bash
        # An app under test for PushHarness in Bash, to see the wire: the device protocol
        # (PushHarness's docs/device-protocol.md) is JSON-RPC 2.0, one JSON message per line, on the Unix
        # socket named by HARNESS_DEVICE_SOCKET. Each line this app sends is written out below as it is.
        #
        # It needs socat (the socket: apt-get install socat) and curl (Parse). At launch it creates a
        # background session, registers for remote notifications and saves its Parse installation; on a
        # silent push it downloads today's file, moves it to Library/Caches/today.json, posts a local
        # notification and completes the push. `--forget-notification` builds in a bug for the variant.
        set -u
        SESSION=com.example.background-session
        FORGET=false
        [ "${1:-}" = --forget-notification ] && FORGET=true

        # The connection: socat's standard input and output are the socket (the device knows socat, a
        # child of this script, as the app's process; the hello names its pid).
        coproc DEVICE { exec socat - "UNIX-CONNECT:$HARNESS_DEVICE_SOCKET"; }

        send() { printf '%s\n' "$1" >&"${DEVICE[1]}"; }
        next=1
        request() { # method params: a request with the next id
            send "{\"jsonrpc\":\"2.0\",\"id\":$next,\"method\":\"$1\",\"params\":$2}"
            next=$((next + 1))
        }
        value() { # name line: the first string or number value of "name" in a line
            printf '%s' "$2" | sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p;t;s/.*\"$1\":\([-0-9.]*\).*/\1/p" | head -n 1
        }

        save_installation() { # token
            local kept="$documents/installation-id"
            mkdir -p "$documents"
            [ -f "$kept" ] || cat /proc/sys/kernel/random/uuid > "$kept"
            local keys=(-H "X-Parse-Application-Id: $HARNESS_PARSE_APPLICATION_ID")
            [ -n "${HARNESS_PARSE_CLIENT_KEY:-}" ] && keys+=(-H "X-Parse-Client-Key: $HARNESS_PARSE_CLIENT_KEY")
            curl -s --noproxy '*' -o /dev/null -X POST "$HARNESS_PARSE_URL/classes/_Installation" "${keys[@]}" \
                -H 'Content-Type: application/json' \
                -d "{\"deviceType\":\"ios\",\"deviceToken\":\"$1\",\"installationId\":\"$(cat "$kept")\",\"appIdentifier\":\"$HARNESS_BUNDLE_ID\",\"channels\":[\"\"]}"
        }

        request hello "{\"protocolVersion\":1,\"bundleId\":\"$HARNESS_BUNDLE_ID\",\"pid\":$DEVICE_PID}"
        registered=0
        completions=()
        while IFS= read -r line <&"${DEVICE[0]}"; do
            method=$(value method "$line")
            id=$(value id "$line")
            if [ -z "$method" ]; then # an answer to one of this app's requests
                case "$id" in
                1) # the handshake: the app's container; now the app launches
                    caches=$(value caches "$line")
                    documents=$(value documents "$line")
                    request session.create "{\"identifier\":\"$SESSION\",\"background\":true}"
                    registered=$next
                    request registerForRemoteNotifications '{}'
                    ;;
                "$registered") save_installation "$(value deviceToken "$line")" ;;
                esac
                continue
            fi
            case "$method" in
            didReceiveRemoteNotification)
                completions+=("$(value completionId "$line")")
                case "$line" in
                *'"content-available":1'*)
                    request downloadTask.resume \
                        "{\"session\":\"$SESSION\",\"taskIdentifier\":$$,\"url\":\"$HARNESS_MEDIA_URL/daily/today.json\"}"
                    ;;
                *) # not a silent push: nothing to download
                    request fetchCompletion "{\"completionId\":${completions[-1]},\"result\":\"noData\"}"
                    unset 'completions[-1]'
                    ;;
                esac
                ;;
            didFinishDownloadingTo) # move the file before answering: the device deletes it then
                mkdir -p "$caches"
                mv "$(value location "$line")" "$caches/today.json"
                send "{\"jsonrpc\":\"2.0\",\"id\":$id,\"result\":{}}"
                ;;
            didCompleteWithError)
                result=newData
                case "$line" in *'"error":{'*) result=failed ;; esac
                if [ "$result" = newData ] && ! $FORGET; then
                    request localNotification.add '{"alertBody":"Today'"'"'s stories are here"}'
                fi
                for completion in "${completions[@]}"; do
                    request fetchCompletion "{\"completionId\":$completion,\"result\":\"$result\"}"
                done
                completions=()
                ;;
            *) # a request this app does not know: JSON-RPC's "method not found"; a notification: nothing
                [ -n "$id" ] && send "{\"jsonrpc\":\"2.0\",\"id\":$id,\"error\":{\"code\":-32601,\"message\":\"unknown method $method\"}}"
                ;;
            esac
        done

        """#
}
