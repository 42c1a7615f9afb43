#!/usr/bin/env python3
"""Open the KDE wallet as pam_kwallet5 does at login, so that no dialog is ever shown.

    kwallet-pam-login.py start PASSWORD LOG   start kwalletd5 with the wallet open; print its pid
    kwallet-pam-login.py key PASSWORD         print the login key as dbus-send's array:byte list

pam_kwallet5 derives a 56-byte key from the login password: PBKDF2-SHA512, 50000 rounds,
salted with the 56 bytes of $XDG_DATA_HOME/kwalletd/kdewallet.salt (made on first use). It
starts `kwalletd5 --pam-login HASH_FD SOCKET_FD` with PAM_KWALLET5_LOGIN set; kwalletd5
reads the key from the pipe, then accepts one connection on the listening socket and reads
the session's environment from it, one NAME=VALUE a line, until end-of-file (at a real login
pam_kwallet_init sends it). Only then does it open the wallet "kdewallet" with the key
(KWalletD::pamOpen), creating the wallet file if it is missing.
"""
import hashlib
import os
import socket
import subprocess
import sys


def login_key(password):
    data = os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share")
    salt_path = os.path.join(data, "kwalletd", "kdewallet.salt")
    os.makedirs(os.path.dirname(salt_path), mode=0o700, exist_ok=True)
    if not os.path.exists(salt_path):
        with open(salt_path, "wb") as f:
            f.write(os.urandom(56))
    with open(salt_path, "rb") as f:
        salt = f.read()
    return hashlib.pbkdf2_hmac("sha512", password.encode(), salt, 50000, 56)


def start(password, log):
    key = login_key(password)
    path = os.path.join(os.environ["XDG_RUNTIME_DIR"], "kwallet5.socket")
    if os.path.exists(path):
        os.unlink(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)
    key_read, key_write = os.pipe()
    with open(os.devnull, "rb") as null, open(log, "ab") as out:
        # PORTAL_AUTH_KWALLET_HIDE names a folder kwalletd5 is not to see (QCA's plugins): an
        # empty tmpfs over it, in a mount namespace of its own; unshare and sh exec, so the pid
        # is kwalletd5's.
        hide = os.environ.get("PORTAL_AUTH_KWALLET_HIDE", "")
        hiding = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                  'mount -t tmpfs none "$0" && exec "$@"', hide] if hide else []
        daemon = subprocess.Popen(
            hiding + ["kwalletd5", "--pam-login", str(key_read), str(listener.fileno())],
            env=dict(os.environ, PAM_KWALLET5_LOGIN="1"),
            stdin=null, stdout=out, stderr=out,
            pass_fds=(key_read, listener.fileno()),
            start_new_session=True,  # it outlives this helper, as a login session's daemon does
        )
    os.close(key_read)
    listener.close()
    os.write(key_write, key)
    os.close(key_write)
    # The listening socket is queued even before kwalletd5 accepts, so this does not wait on it.
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.settimeout(20)
    client.connect(path)
    client.sendall("".join(f"{k}={v}\n" for k, v in os.environ.items() if "\n" not in v).encode())
    client.close()
    os.unlink(path)
    print(daemon.pid)


if __name__ == "__main__":
    if sys.argv[1:2] == ["start"] and len(sys.argv) == 4:
        start(sys.argv[2], sys.argv[3])
    elif sys.argv[1:2] == ["key"] and len(sys.argv) == 3:
        print(",".join(str(b) for b in login_key(sys.argv[2])))
    else:
        sys.exit("usage: kwallet-pam-login.py start PASSWORD LOG | key PASSWORD")
