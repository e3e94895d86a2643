"""The probe's own redis-server: a free loopback port and a temporary folder, so that it never
touches a server or files of anyone else's. The AOF is on, written at every command, because
the propagation probe reads what reached it."""
import os
import socket
import subprocess
import sys
import tempfile
import time

from .resp import Conn


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    def __init__(self, binary, module):
        self.dir = tempfile.mkdtemp(prefix="probe-cf-")
        self.port = free_port()
        self.log = open(os.path.join(self.dir, "log"), "wb")
        self.process = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir,
             "--save", "", "--appendonly", "yes", "--appendfsync", "always",
             "--enable-debug-command", "yes", "--loadmodule", os.path.abspath(module)],
            stdout=self.log, stderr=subprocess.STDOUT)

    def connect(self):
        """A connection once the server answers PING; exits if it never does (a module that
        fails to load stops the server, and the log says why)."""
        for _ in range(100):
            try:
                c = Conn(self.port)
                c.call("PING")
                return c
            except OSError:
                time.sleep(0.05)
        sys.exit("the server did not start; see %s/log" % self.dir)

    def stop(self):
        """Waits for the SHUTDOWN the probes end with; a server that did not get it (the probe
        stopped early) is terminated."""
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.terminate()
            self.process.wait()
        self.log.close()

    def remove(self):
        subprocess.run(["rm", "-rf", self.dir])
