#!/usr/bin/env perl
# nasa_tv.pl - the NASA TV tutorial app (daily photo by silent push) as an app under test for
# PushHarness, in Perl 5.36 with core modules only.
#
# Written from docs/writing-an-app.md and docs/device-protocol.md alone (no other source of the
# repository was read). It speaks the device protocol (JSON-RPC 2.0, one message a line) over the
# Unix socket in HARNESS_DEVICE_SOCKET, saves its Parse installation over HTTP, downloads the daily
# photo in a background session when a silent push arrives, and handles background relaunches for
# that session. installationId, the task counter and the task -> URL map live in the container.
use v5.36;
use IO::Socket::UNIX;
use Socket qw(SOCK_STREAM);
use JSON::PP;
use HTTP::Tiny;
use File::Copy qw(move);
use File::Path qw(make_path);
use Errno qw(EINTR EAGAIN);

$| = 1;
my $SESSION = 'com.razeware.backgroundsession.dailyphoto';
my $PHOTO_PATH = '/photos/dailyphoto.jpg';
my $ALERT = 'Astronomy Picture of the Day Available';

my $json = JSON::PP->new->utf8->canonical->allow_nonref;
my %env = map { $_ => ($ENV{$_} // die "nasa_tv.pl: $_ is not set\n") }
    qw(HARNESS_DEVICE_SOCKET HARNESS_BUNDLE_ID HARNESS_MEDIA_URL HARNESS_PARSE_URL
       HARNESS_PARSE_APPLICATION_ID HARNESS_PARSE_CLIENT_KEY);

my $sock = IO::Socket::UNIX->new(Type => SOCK_STREAM, Peer => $env{HARNESS_DEVICE_SOCKET})
    or die "nasa_tv.pl: cannot connect to $env{HARNESS_DEVICE_SOCKET}: $!\n";
$sock->autoflush(1);

# ---------------------------------------------------------------- state
my $next_id = 1;          # my own request ids
my %pending;              # id -> callback(result, error)
my %container;            # home, caches, documents, tmp
my $badge = 0;            # the app's badge as we believe it
my $foreground = 0;       # on screen?
my %fetch_for_task;       # taskIdentifier -> completionId of the push/fetch that started it
my %moved;                # taskIdentifier -> 1 when its file was moved into place
my %events_completion;    # session identifier -> completionId of handleEventsForBackgroundURLSession
my $state_file;
my %state;                # persisted: installationId, nextTaskIdentifier, tasks {n => url}

# ---------------------------------------------------------------- wire
sub send_msg ($msg) {
    $msg->{jsonrpc} = '2.0';
    my $line = $json->encode($msg) . "\n";
    while (length $line) {
        my $n = syswrite($sock, $line);
        if (!defined $n) { next if $! == EINTR || $! == EAGAIN; exit 0 }   # device gone
        substr($line, 0, $n) = '';
    }
}

sub request ($method, $params, $cb = undef) {
    my $id = $next_id++;
    $pending{$id} = $cb // sub ($r, $e) {
        log_line("$method failed: $e->{code} $e->{message}") if $e && $method ne 'log';
    };
    send_msg({ id => $id, method => $method, params => $params });
    return $id;
}

sub notify ($method, $params) { send_msg({ method => $method, params => $params }) }
sub respond ($id, $result) { send_msg({ id => $id, result => $result }) }
sub respond_error ($id, $code, $message) {
    send_msg({ id => $id, error => { code => $code, message => $message } });
}
sub log_line ($message) { notify('log', { message => "nasa_tv.pl: $message" }) }

# ---------------------------------------------------------------- persistence
sub load_state () {
    my $dir = "$container{home}/Library";
    make_path($dir);
    $state_file = "$dir/nasa_tv_state.json";
    if (open my $fh, '<:raw', $state_file) {
        local $/; my $text = <$fh>;
        my $s = eval { $json->decode($text) };
        %state = %$s if ref $s eq 'HASH';
    }
    $state{installationId} //= new_uuid();
    $state{nextTaskIdentifier} //= 1;
    $state{tasks} //= {};
    save_state();
}

sub save_state () {
    my $tmp = "$state_file.tmp";
    open my $fh, '>:raw', $tmp or die "nasa_tv.pl: $tmp: $!\n";
    print $fh $json->encode(\%state);
    close $fh;
    rename $tmp, $state_file or die "nasa_tv.pl: rename $tmp: $!\n";
}

sub new_uuid () {
    my $bytes;
    if (open my $fh, '<:raw', '/dev/urandom') { read $fh, $bytes, 16; close $fh }
    $bytes = join '', map { chr int rand 256 } 1 .. 16 unless defined $bytes && length $bytes == 16;
    my @b = unpack 'C16', $bytes;
    $b[6] = ($b[6] & 0x0f) | 0x40;
    $b[8] = ($b[8] & 0x3f) | 0x80;
    return uc sprintf '%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x', @b;
}

# ---------------------------------------------------------------- app logic
sub create_session () {
    request('session.create', { identifier => $SESSION, background => JSON::PP::true });
}

sub save_installation ($token) {
    my $body = {
        deviceType => 'ios', deviceToken => $token, installationId => $state{installationId},
        appIdentifier => $env{HARNESS_BUNDLE_ID}, appName => 'NASA TV', timeZone => 'UTC',
    };
    my $res = HTTP::Tiny->new(timeout => 10)->request('POST',
        "$env{HARNESS_PARSE_URL}/classes/_Installation", {
            headers => {
                'X-Parse-Application-Id' => $env{HARNESS_PARSE_APPLICATION_ID},
                'X-Parse-Client-Key'     => $env{HARNESS_PARSE_CLIENT_KEY},
                'Content-Type'           => 'application/json',
            },
            content => $json->encode($body),
        });
    log_line("Parse installation $state{installationId}: $res->{status} $res->{content}");
}

sub start_photo_download ($completion_id) {
    my $task = $state{nextTaskIdentifier}++;
    my $url = "$env{HARNESS_MEDIA_URL}$PHOTO_PATH";
    $state{tasks}{$task} = $url;
    save_state();
    $fetch_for_task{$task} = $completion_id if defined $completion_id;
    request('downloadTask.resume', { session => $SESSION, taskIdentifier => $task + 0, url => $url },
        sub ($r, $e) {
            return unless $e;
            log_line("downloadTask.resume $task refused: $e->{code} $e->{message}");
            delete $state{tasks}{$task}; save_state();
            my $cid = delete $fetch_for_task{$task};
            request('fetchCompletion', { completionId => $cid, result => 'failed' }) if defined $cid;
        });
}

sub handle_push ($push) {
    return unless ref $push eq 'HASH';
    my $cid = $push->{completionId};
    my $aps = ref $push->{userInfo} eq 'HASH' ? $push->{userInfo}{aps} : undef;
    $aps = $push->{aps} if !$aps && ref $push->{aps} eq 'HASH';   # in case the push is userInfo itself
    if (ref $aps eq 'HASH' && $aps->{'content-available'}) {
        start_photo_download($cid);
    } elsif (defined $cid) {
        request('fetchCompletion', { completionId => $cid, result => 'noData' });
    }
}

sub destination_for ($task) {
    my $url = $state{tasks}{$task} // "$env{HARNESS_MEDIA_URL}$PHOTO_PATH";
    my ($name) = $url =~ m{([^/?#]+)(?:[?#].*)?$};
    $name //= 'dailyphoto.jpg';
    my $folder = $url =~ m{/videos/} ? 'com.razeware.videos' : 'com.razeware.photos';
    return ("$container{caches}/$folder", "$container{caches}/$folder/$name");
}

sub did_finish_downloading ($id, $p) {
    my $task = $p->{taskIdentifier};
    my $location = $p->{location};
    my $status = $p->{statusCode} // 200;
    if (defined $location && -e $location) {
        if ($status >= 200 && $status < 300) {
            my ($dir, $dest) = destination_for($task);
            make_path($dir);
            unlink $dest;
            if (move($location, $dest)) { $moved{$task} = 1 }
            else { log_line("cannot move $location to $dest: $!") }
        } else {
            log_line("task $task answered $status; discarding its file");
            unlink $location;
        }
    }
    respond($id, {});
}

sub did_complete ($p) {
    my $task = $p->{taskIdentifier};
    my $error = $p->{error};
    my $cid = delete $fetch_for_task{$task};
    my $ok = !defined $error && delete $moved{$task};
    delete $moved{$task};
    delete $state{tasks}{$task};
    save_state();
    if ($ok) {
        my $new_badge = $badge + 1;
        request('localNotification.add',
            { alertBody => $ALERT, applicationIconBadgeNumber => $new_badge + 0 },
            sub ($r, $e) {
                $badge = $new_badge unless $e || $foreground;
                request('fetchCompletion', { completionId => $cid, result => 'newData' }) if defined $cid;
            });
    } else {
        log_line("task $task ended: " . (defined $error
            ? "error $error->{code} $error->{localizedDescription}" : 'no file'));
        request('fetchCompletion', { completionId => $cid, result => 'failed' }) if defined $cid;
    }
}

sub on_hello ($r) {
    %container = %{ $r->{container} };
    $badge = $r->{badge} // 0;
    $foreground = ($r->{applicationState} // '') eq 'active' ? 1 : 0;
    load_state();
    my $reason = $r->{launchReason} // 'user';
    log_line("launched: $reason, badge $badge, installation $state{installationId}");
    create_session();
    request('registerForRemoteNotifications', {}, sub ($res, $e) {
        if ($e) { log_line("registerForRemoteNotifications failed: $e->{message}"); return }
        save_installation($res->{deviceToken});
    });
    handle_push($r->{remoteNotification}) if $reason eq 'remote-notification';
}

sub on_device_request ($id, $method, $p) {
    if ($method eq 'didFinishDownloadingTo') { did_finish_downloading($id, $p) }
    elsif ($method eq 'willPresentNotification') { respond($id, { options => [qw(banner list sound badge)] }) }
    else { respond_error($id, -32601, "Method not found: $method") }
}

sub on_device_notification ($method, $p) {
    if    ($method eq 'didReceiveRemoteNotification') { handle_push($p) }
    elsif ($method eq 'performFetch') { start_photo_download($p->{completionId}) }
    elsif ($method eq 'didCompleteWithError') { did_complete($p) }
    elsif ($method eq 'handleEventsForBackgroundURLSession') {
        $events_completion{$p->{identifier}} = $p->{completionId};
        request('session.create', { identifier => $p->{identifier}, background => JSON::PP::true });
    }
    elsif ($method eq 'urlSessionDidFinishEvents') {
        my $cid = delete $events_completion{$p->{session}};
        request('backgroundEventsCompletion', { completionId => $cid }) if defined $cid;
    }
    elsif ($method eq 'applicationDidEnterBackground' || $method eq 'applicationWillResignActive') { $foreground = 0 }
    elsif ($method eq 'applicationDidBecomeActive') { $foreground = 1 }
    elsif ($method eq 'backgroundTaskExpired') {
        request('backgroundTask.end', { identifier => $p->{identifier} });
    }
    # didWriteData, didResumeAtOffset, applicationWillEnterForeground, …: nothing to do
}

sub dispatch ($msg) {
    return unless ref $msg eq 'HASH';
    my $has_id = exists $msg->{id} && defined $msg->{id};
    if (defined $msg->{method}) {
        my $p = ref $msg->{params} eq 'HASH' ? $msg->{params} : {};
        if ($has_id) { on_device_request($msg->{id}, $msg->{method}, $p) }
        else         { on_device_notification($msg->{method}, $p) }
    } elsif ($has_id) {
        my $cb = delete $pending{$msg->{id}} or return;
        $cb->($msg->{result}, $msg->{error});
    }
}

# ---------------------------------------------------------------- main loop
$pending{ request('hello', {
    protocolVersion => 1, bundleId => $env{HARNESS_BUNDLE_ID}, pid => $$ + 0,
}, undef) } = sub ($r, $e) {
    if ($e) { warn "nasa_tv.pl: hello refused: $e->{code} $e->{message}\n"; exit 1 }
    on_hello($r);
};

my $buffer = '';
while (1) {
    my $n = sysread($sock, $buffer, 65536, length $buffer);
    if (!defined $n) { next if $! == EINTR || $! == EAGAIN; last }
    last if $n == 0;                                  # the device closed the socket
    while ((my $nl = index $buffer, "\n") >= 0) {
        my $line = substr($buffer, 0, $nl + 1, '');
        next unless $line =~ /\S/;
        my $msg = eval { $json->decode($line) };
        if (!defined $msg) { warn "nasa_tv.pl: not JSON: $line"; next }
        dispatch($msg);
    }
}
exit 0;
