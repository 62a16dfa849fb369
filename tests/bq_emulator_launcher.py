"""Runs bqemulator (a BigQuery API emulator) offline on 127.0.0.1.

Used by tests/bq_emulator.py as a subprocess:

    python tests/bq_emulator_launcher.py --ready-file PATH [--project ID]

It binds the REST and gRPC servers to 127.0.0.1 on ports the OS picks,
keeps everything in memory, writes {"rest_url": ..., "grpc_endpoint": ...}
to PATH once both accept connections, and runs until SIGTERM or SIGINT.

bqemulator as published would reach beyond this machine at start-up; this
launcher stops it from doing so:

* it runs `INSTALL spatial; LOAD spatial` (a download from DuckDB's
  extension repository) and refuses to start when that fails. The loader is
  replaced by one that instead turns off DuckDB's automatic extension
  installation, so a query needing a missing extension fails instead of
  downloading it. GEOGRAPHY and ST_* functions are therefore unavailable.
* its best-effort `INSTALL avro` is skipped (enable_format_extensions=False):
  AVRO loads fail with UnsupportedFeatureError.
* as a last guard, any socket connection from this process to an address
  other than the loopback one raises ConnectionRefusedError.
"""
from __future__ import annotations

import argparse
import asyncio
import ipaddress
import json
import os
import signal
import socket
import sys

# Nothing here may reach beyond 127.0.0.1 (for the process's own Python
# sockets; DuckDB's downloads are native and are stopped below instead).
_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex


def _is_local(address) -> bool:
    if not isinstance(address, tuple):  # AF_UNIX paths
        return True
    host = address[0]
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: it would need resolving, refuse it
        return False


def _guarded_connect(self, address):
    if not _is_local(address):
        raise ConnectionRefusedError(f"bq_emulator_launcher: connection to {address!r} refused (loopback only)")
    return _connect(self, address)


def _guarded_connect_ex(self, address):
    if not _is_local(address):
        raise ConnectionRefusedError(f"bq_emulator_launcher: connection to {address!r} refused (loopback only)")
    return _connect_ex(self, address)


socket.socket.connect = _guarded_connect
socket.socket.connect_ex = _guarded_connect_ex


def _disable_extension_downloads() -> None:
    from bqemulator.storage import engine
    from bqemulator.types import geography

    def load_spatial_offline(self) -> None:
        # In place of INSTALL/LOAD spatial: never download an extension.
        self._connection.execute("SET autoinstall_known_extensions = false")

    def no_geography_connection():
        raise RuntimeError(
            "GEOGRAPHY is unavailable in the test emulator: DuckDB's spatial "
            "extension is not downloaded (tests/bq_emulator_launcher.py)"
        )

    engine.DuckDBEngine._load_spatial = load_spatial_offline
    geography._ensure_conv_conn = no_geography_connection


async def _serve(project: str, ready_file: str) -> None:
    from bqemulator.config import LogFormat, LogLevel, PersistenceMode, Settings
    from bqemulator.server import EmulatorServer

    settings = Settings(
        rest_host="127.0.0.1",
        rest_port=0,
        grpc_host="127.0.0.1",
        grpc_port=0,
        persistence_mode=PersistenceMode.EPHEMERAL,
        default_project_id=project,
        enable_format_extensions=False,
        tracing_enabled=False,
        otlp_endpoint=None,
        log_level=LogLevel.WARNING,
        log_format=LogFormat.CONSOLE,
    )
    server = EmulatorServer(settings)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await server.start()
    try:
        tmp = ready_file + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"rest_url": server.rest_url, "grpc_endpoint": server.grpc_endpoint, "pid": os.getpid()}, f)
        os.replace(tmp, ready_file)
        await stop.wait()
    finally:
        await server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ready-file", required=True)
    parser.add_argument("--project", default="test-project")
    args = parser.parse_args()
    _disable_extension_downloads()
    asyncio.run(_serve(args.project, args.ready_file))
    return 0


if __name__ == "__main__":
    sys.exit(main())
