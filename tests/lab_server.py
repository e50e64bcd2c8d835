"""The browser tests' JupyterLab: a real `jupyter lab` on a free localhost port, isolated from the user's
settings and workspaces, that loads THIS checkout's built extension, and a headless Chromium.

The extension is found through ``JUPYTER_PATH`` (searched before ``sys.prefix``), pointing at a temporary
``labextensions/leapp-notebook`` symlink to ``leapp_notebook/labextension`` of the checkout the tests
import. So a worktree tests its own build although ``setup.sh`` linked another checkout into
``sys.prefix``, and a fresh clone tests the build it ships. :func:`loaded_build` reads back from the page
which build JupyterLab actually served.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Iterator

import leapp_notebook as ln

CHROMIUM = os.environ.get("LEAPP_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
BUILT = Path(ln.__file__).resolve().parent / "labextension"
BUILT_MANIFEST = BUILT / "package.json"
START_TIMEOUT_S = 120
# Every browser test's screenshots, to look at after a run (ignored by git).
SHOTS = Path(__file__).resolve().parents[1] / "test-screenshots"
SHOTS.mkdir(exist_ok=True)


def chromium_path() -> str | None:
    return CHROMIUM if os.path.exists(CHROMIUM) else shutil.which(CHROMIUM)


def built_load() -> str | None:
    """The remote entry of the built extension (``static/remoteEntry.<hash>.js``), None when not built."""
    if not BUILT_MANIFEST.exists():
        return None
    return json.loads(BUILT_MANIFEST.read_text()).get("jupyterlab", {}).get("_build", {}).get("load")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def path_without(program: str, folder: Path) -> str:
    """A PATH on which ``program`` is not found: ``folder`` gets a symlink to every other program of the
    current PATH (first one of each name wins, as in a PATH lookup)."""
    folder.mkdir(parents=True, exist_ok=True)
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        if not directory or not os.path.isdir(directory):
            continue
        for name in os.listdir(directory):
            target = folder / name
            source = os.path.join(directory, name)
            if name != program and not os.path.lexists(target) and os.access(source, os.X_OK) \
                    and not os.path.isdir(source):
                target.symlink_to(source)
    path = os.pathsep.join([str(Path(sys.executable).parent), str(folder)])
    assert shutil.which(program, path=path) is None, f"{program} still on {path}"
    return path


@contextlib.contextmanager
def jupyter_lab(root: Path, state: Path, *, token: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """Run JupyterLab over ``root`` (its state in ``state``) until the block ends; yields the base URL."""
    (state / "share" / "labextensions").mkdir(parents=True)
    (state / "share" / "labextensions" / "leapp-notebook").symlink_to(BUILT, target_is_directory=True)
    news = state / "settings" / "@jupyterlab" / "apputils-extension"
    news.mkdir(parents=True)
    # no "official Jupyter news?" toast over the outputs
    (news / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
    port = free_port()
    environment = {**os.environ, **(env or {}), "JUPYTER_PATH": str(state / "share"),
                   "JUPYTER_RUNTIME_DIR": str(state / "runtime")}
    log_path = state / "server.log"
    with log_path.open("w") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ServerApp.ip=127.0.0.1",
             f"--IdentityProvider.token={token}", "--ServerApp.password=", f"--ServerApp.root_dir={root}",
             "--allow-root", "--LabApp.expose_app_in_browser=True",
             f"--LabApp.workspaces_dir={state / 'workspaces'}", f"--LabApp.user_settings_dir={state / 'settings'}"],
            stdout=log, stderr=subprocess.STDOUT, env=environment)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while True:
                try:
                    request = urllib.request.Request(f"{url}/api/status", headers={"Authorization": f"token {token}"})
                    urllib.request.urlopen(request, timeout=2).close()
                    break
                except (urllib.error.URLError, ConnectionError):
                    if server.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(f"JupyterLab did not start:\n{log_path.read_text()[-3000:]}") from None
                    time.sleep(0.5)
            yield url
        finally:
            server.terminate()  # SIGTERM lets the server shut down the kernels it started
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def loaded_build(page) -> str | None:
    """The remote entry JupyterLab told the page to load for leapp-notebook."""
    return page.evaluate("""() => {
        const config = JSON.parse(document.getElementById('jupyter-config-data').textContent);
        const found = (config.federated_extensions || []).find(e => e.name === 'leapp-notebook');
        return found ? found.load : null;
    }""")
