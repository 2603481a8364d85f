"""Simulated BMCs for the fake driver's hosts, speaking real IPMI.

One process serves a BMC per simulated host on loopback, built on
pyghmi's BMC server as virtualbmc is: ``ipmitool``, ``fence_ipmilan`` and
the monitor's IPMI driver talk to it as to a server's BMC. Run it beside
the agent, with the agent's ``--state-dir``, host prefix and host count::

    python -m nova_forcedown.compute.drivers.fake_bmc \\
        --state-dir /tmp/fake-hosts --hosts 3 --port 6230

Host ``i`` answers on port ``port + i - 1``. With ``--redfish-port``, the
same BMCs also answer Redfish over HTTP on that port, host ``X`` as the
system ``/redfish/v1/Systems/X`` (power state and the ComputerSystem.Reset
action, what sushy and fence_redfish use). The power state of host ``X``
is the file ``<state-dir>/X.power`` (``on`` or ``off``; none is on), which
the fake driver obeys: a host powered off stops heartbeating and runs
nothing, as a real one; powered on, it comes back empty. The BMC outlives
the agent, as a real BMC outlives its host's operating system.

The hardware faults a BMC reports are the words of ``<state-dir>/X.faults``
(none: healthy), among :data:`FAULTS`: IPMI's chassis status sets their
bits, as ``ipmitool chassis status`` shows, and Redfish's system Status
says Critical for a power fault, Warning for a drive or fan fault::

    echo main-power > state/fake-hosts/fake-compute-2.faults
"""

import argparse
import base64
import http.server
import json
import logging
import os
import sys
import tempfile
import threading

from pyghmi.ipmi import bmc
from pyghmi.ipmi.private import serversession

LOG = logging.getLogger(__name__)

ON = 'on'
OFF = 'off'
DEFAULT_USERNAME = 'admin'
DEFAULT_PASSWORD = 'password'
# Printed once every port is bound, before the first request is served.
SERVING = 'Every BMC is listening.'
# RMCP+ authentication algorithm 1: RAKP-HMAC-SHA1, cipher suite 3.
_RAKP_HMAC_SHA1 = 1
# RMCP+ status: no cipher suite matches the proposed algorithms.
_NO_CIPHER_SUITE_MATCH = 0x11


# fault -> (chassis status byte, bit, Redfish health).
FAULTS = {
    'power-overload': (0, 0x02, 'Critical'),
    'main-power': (0, 0x08, 'Critical'),
    'power-control': (0, 0x10, 'Critical'),
    'drive': (2, 0x04, 'Warning'),
    'cooling': (2, 0x08, 'Warning'),
}
_REDFISH_HEALTH = ('OK', 'Warning', 'Critical')


def power_path(state_dir, host):
    return os.path.join(state_dir, host + '.power')


def faults_path(state_dir, host):
    return os.path.join(state_dir, host + '.faults')


def read_power(state_dir, host):
    """``on`` or ``off``: what host's BMC says of its power."""
    try:
        with open(power_path(state_dir, host)) as power:
            return OFF if power.read().strip() == OFF else ON
    except FileNotFoundError:
        return ON


def write_power(state_dir, host, state):
    """Set host's power, replacing the file at once."""
    _replace(state_dir, host, power_path(state_dir, host), state)


def read_faults(state_dir, host):
    """The :data:`FAULTS` host's BMC reports; unknown words are ignored."""
    try:
        with open(faults_path(state_dir, host)) as faults:
            return sorted(set(faults.read().split()) & set(FAULTS))
    except FileNotFoundError:
        return []


def write_faults(state_dir, host, *faults):
    """Have host's BMC report ``faults`` (none: healthy again)."""
    _replace(state_dir, host, faults_path(state_dir, host), ' '.join(faults))


def _replace(state_dir, host, path, text):
    """Write ``text`` as ``path`` at once: a BMC never reads half of it."""
    os.makedirs(state_dir, exist_ok=True)
    with tempfile.NamedTemporaryFile('w', dir=state_dir, prefix='.' + host,
                                     delete=False) as file:
        file.write(text)
    os.replace(file.name, path)


def redfish_health(faults):
    """Redfish's Health for ``faults``: the worst of theirs, else OK."""
    return max((FAULTS[fault][2] for fault in faults),
               key=_REDFISH_HEALTH.index, default='OK')


def _each_packet(process_pktqueue, queue, bmc):
    """Run pyghmi's ``process_pktqueue`` until ``queue`` is empty.

    pyghmi's server handles a packet it does not expect by raising out of
    the loop that serves every BMC of the process, which ends it. Here a
    packet that raises is dropped with one line in the log, and the
    packets after it are handled.
    """
    while queue:
        try:
            process_pktqueue()
        except Exception as exc:  # noqa: whatever a packet makes pyghmi do
            LOG.warning('BMC on port %d dropped a packet it could not '
                        'handle: %r', bmc.port, exc)


class _Sha1Session(serversession.ServerSession):
    """A session that refuses what it cannot do, as a real BMC does.

    pyghmi's server answers every open-session request with cipher suite
    3 (SHA-1), even one proposing SHA-256, which pyghmi's own client
    proposes first and then fails on. Refusing it with "no cipher suite
    match" makes a client fall back to suite 3, as against a real BMC that
    has only suite 3.
    """

    def create_open_session_response(self, request):
        if request[12] != _RAKP_HMAC_SHA1:
            return (bytearray([request[0], _NO_CIPHER_SUITE_MATCH, 0, 0]) +
                    request[4:8] + bytearray(4))
        return super().create_open_session_response(request)

    def process_pktqueue(self):
        _each_packet(super().process_pktqueue, self.pktqueue, self.bmc)

    def sessionless_data(self, data, sockaddr):
        """A packet of a client that has left this session: the BMC's.

        A client that logs in again from the same address and port (as
        pyghmi's client does, its socket shared) starts with a packet
        outside any session; pyghmi's Session._handle_ipmi_packet then
        removes this session from Session.bmc_handlers and hands that
        packet to the BMC. Packets of the client still queued here (a
        retransmission, its next request) come after it to
        Session.process_pktqueue, which hands them to sessionless_data,
        a method of the BMC (IpmiServer) that a session lacks: pyghmi's
        "AttributeError: ... no attribute 'sessionless_data'". They are
        the BMC's, as the first one was.
        """
        self.bmc.sessionless_data(data, sockaddr)


class HostBmc(bmc.Bmc):
    """The BMC of one simulated host: its power, in the state directory."""

    def __init__(self, state_dir, host, port, username, password,
                 stuck=False):
        super().__init__({username: password}, port=port,
                         address='127.0.0.1')
        self.state_dir = state_dir
        self.host = host
        self.stuck = stuck

    def process_pktqueue(self):
        _each_packet(super().process_pktqueue, self.pktqueue, self)

    def get_power_state(self):
        return read_power(self.state_dir, self.host)

    def get_chassis_status(self, session):
        """The power, and the bits of the faults the host has."""
        status = [1 if self.get_power_state() == ON else 0, 0, 0]
        for fault in read_faults(self.state_dir, self.host):
            byte, bit, _ = FAULTS[fault]
            status[byte] |= bit
        session.send_ipmi_response(data=status)

    def power_off(self):
        # A stuck BMC takes the command and does nothing, as a broken
        # power supply or firmware does.
        if not self.stuck:
            write_power(self.state_dir, self.host, OFF)

    def power_shutdown(self):
        self.power_off()

    def power_on(self):
        write_power(self.state_dir, self.host, ON)

    def power_reset(self):
        write_power(self.state_dir, self.host, ON)

    def power_cycle(self):
        write_power(self.state_dir, self.host, ON)


_SYSTEMS = '/redfish/v1/Systems'
_RESET = '/Actions/ComputerSystem.Reset'
_OFF_RESETS = ('ForceOff', 'GracefulShutdown', 'PushPowerButton')


class RedfishHandler(http.server.BaseHTTPRequestHandler):
    """The few Redfish resources a fence needs, for every host's BMC."""

    # Set by serve_redfish: {host: HostBmc}, and the accepted credentials.
    bmcs = {}
    credentials = None

    def do_GET(self):
        path = self.path.rstrip('/')
        # The service root is open to all, as Redfish requires.
        if path != '/redfish/v1' and not self._authorized():
            return
        if path == '/redfish/v1':
            return self._send(200, {
                '@odata.id': '/redfish/v1/', 'Id': 'RootService',
                'Name': 'Root Service', 'RedfishVersion': '1.6.0',
                'Systems': {'@odata.id': _SYSTEMS}})
        if path == _SYSTEMS:
            return self._send(200, {
                '@odata.id': _SYSTEMS, 'Name': 'Computer Systems',
                'Members@odata.count': len(self.bmcs),
                'Members': [{'@odata.id': '%s/%s' % (_SYSTEMS, host)}
                            for host in sorted(self.bmcs)]})
        bmc = self._bmc(path)
        if bmc is None:
            return self._send(404, {'error': {'message': 'no ' + path}})
        uri = '%s/%s' % (_SYSTEMS, bmc.host)
        health = redfish_health(read_faults(bmc.state_dir, bmc.host))
        self._send(200, {
            '@odata.id': uri, 'Id': bmc.host, 'Name': bmc.host,
            'PowerState': bmc.get_power_state().capitalize(),
            'Status': {'State': 'Enabled', 'Health': health,
                       'HealthRollup': health},
            'Actions': {'#ComputerSystem.Reset': {
                'target': uri + _RESET,
                'ResetType@Redfish.AllowableValues': [
                    'On', 'ForceOff', 'GracefulShutdown']}}})

    def do_POST(self):
        if not self._authorized():
            return
        length = int(self.headers.get('Content-Length') or 0)
        try:
            reset = json.loads(self.rfile.read(length) or b'{}')['ResetType']
        except (ValueError, KeyError):
            return self._send(400, {'error': {'message': 'no ResetType'}})
        bmc = (self._bmc(self.path[:-len(_RESET)])
               if self.path.endswith(_RESET) else None)
        if bmc is None:
            return self._send(404, {'error': {'message': 'no ' + self.path}})
        if reset in _OFF_RESETS:
            bmc.power_off()
        else:
            bmc.power_on()
        self._send(204)

    def _bmc(self, path):
        prefix = _SYSTEMS + '/'
        return (self.bmcs.get(path[len(prefix):])
                if path.startswith(prefix) else None)

    def _authorized(self):
        given = self.headers.get('Authorization', '')
        if given == 'Basic ' + self.credentials:
            return True
        self._send(401, {'error': {'message': 'unauthorized'}})
        return False

    def _send(self, status, body=None):
        data = b'' if body is None else json.dumps(body).encode()
        self.send_response(status)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def serve_redfish(port, bmcs, username, password):
    """Serve Redfish for ``bmcs`` on 127.0.0.1:``port``, in a thread."""
    handler = type('Handler', (RedfishHandler,), {
        'bmcs': {bmc.host: bmc for bmc in bmcs},
        'credentials': base64.b64encode(
            ('%s:%s' % (username, password)).encode()).decode()})
    server = http.server.ThreadingHTTPServer(('127.0.0.1', port), handler)
    threading.Thread(target=server.serve_forever, daemon=True,
                     name='redfish').start()
    return server


def _arguments(argv):
    parser = argparse.ArgumentParser(
        prog='fake_bmc', description='Serve an IPMI BMC on 127.0.0.1 for '
        'each host of the fake driver.')
    parser.add_argument('--state-dir', required=True,
                        help="The fake agent's --state-dir.")
    parser.add_argument('--host-prefix', default='fake-compute-',
                        help="The fake agent's --host-prefix.")
    parser.add_argument('--hosts', type=int, default=1,
                        help="The fake agent's --hosts.")
    parser.add_argument('--port', type=int, default=6230,
                        help='The UDP port of host 1; host i is on port + '
                             'i - 1.')
    parser.add_argument('--redfish-port', type=int,
                        help='Also serve Redfish over HTTP on this TCP '
                             'port, every host a system.')
    parser.add_argument('--stuck', action='append', default=[],
                        metavar='HOST',
                        help='A host whose BMC takes a power-off and does '
                             'nothing (a fence that fails); repeatable.')
    parser.add_argument('--username', default=DEFAULT_USERNAME)
    parser.add_argument('--password', default=DEFAULT_PASSWORD)
    return parser.parse_args(argv)


def main(argv=None):
    args = _arguments(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(format='%(asctime)s %(levelname)s %(message)s')
    # pyghmi creates the sessions of every server through this name.
    serversession.ServerSession = _Sha1Session
    bmcs = []
    for index in range(1, args.hosts + 1):
        host = '%s%d' % (args.host_prefix, index)
        bmcs.append(HostBmc(args.state_dir, host, args.port + index - 1,
                            args.username, args.password,
                            stuck=host in args.stuck))
        print('BMC of %s on 127.0.0.1:%d' % (host, args.port + index - 1),
              flush=True)
    if args.redfish_port:
        serve_redfish(args.redfish_port, bmcs, args.username, args.password)
        print('Redfish of every host on http://127.0.0.1:%d%s'
              % (args.redfish_port, _SYSTEMS), flush=True)
    print(SERVING, flush=True)
    try:
        bmc.Bmc.listen()
    except KeyboardInterrupt:
        # Ctrl-C is how it is stopped in a terminal; no traceback.
        return 0


if __name__ == '__main__':
    sys.exit(main())
