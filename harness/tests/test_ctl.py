"""`futuredisk ctl`: the control-socket client's own error handling (the
protocol itself is tested against the plugin in nbdplugin/tests)."""
import os
import socket
import threading


def test_help(run):
    out = run("ctl", "--help", check=0).stdout
    assert "Usage:" in out and "mark NAME" in out


def test_usage_errors(run):
    assert "Usage:" in run("ctl", check=2).stderr
    assert "Usage:" in run("ctl", "/tmp/only-a-socket", check=2).stderr
    p = run("ctl", "/nonexistent/ctl.sock", "stats", check=2)
    assert "/nonexistent/ctl.sock: No such file or directory" in p.stderr
    p = run("ctl", "/" + "s" * 200, "stats", check=2)
    assert "too long" in p.stderr
    p = run("ctl", "/tmp/x", "mark", "a\nb", check=2)
    assert "one line" in p.stderr


def fake_server(path, reply):
    """A one-shot control socket that answers every line with `reply`."""
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    srv.listen(1)

    def serve():
        conn, _ = srv.accept()
        line = conn.makefile("rb").readline()
        if reply is not None:
            conn.sendall(reply)
        conn.close()
        srv.close()
        serve.got = line
    t = threading.Thread(target=serve)
    t.start()
    return t, serve


def test_exit_status_follows_reply(run, tmp_path):
    path = str(tmp_path / "ctl.sock")
    t, s = fake_server(path, b'{"ok": true, "mark": "x"}\n')
    p = run("ctl", path, "mark", "x", check=0)
    t.join()
    assert s.got == b"mark x\n"
    assert p.stdout == '{"ok": true, "mark": "x"}\n'
    os.unlink(path)
    t, s = fake_server(path, b'{"ok": false, "error": "no"}\n')
    run("ctl", path, "bogus", check=1)
    t.join()
    os.unlink(path)
    t, s = fake_server(path, None)  # hangs up without a reply
    p = run("ctl", path, "stats", check=2)
    t.join()
    assert "connection closed before a reply" in p.stderr
