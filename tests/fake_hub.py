"""An in-process fake Hugging Face Hub for tests: ``http.server`` on 127.0.0.1, an ephemeral port, a thread.

It speaks the small part of the Hub HTTP API that ``huggingface_hub`` 2.x (without Xet), ``transformers`` and
``datasets`` use to push and to load, for model, dataset and space repositories alike:

- ``POST /api/repos/create`` (409 when the repo exists), ``DELETE /api/repos/delete``, ``POST /api/validate-yaml``
  (400 on unparsable front matter), ``GET /api/whoami-v2``;
- ``POST /api/<type>s/<id>/preupload/<rev>`` (``lfs`` for binary suffixes, NUL bytes or large files, else
  ``regular``; reports the current oid so unchanged files are skipped);
- ``POST /[<type>s/]<id>.git/info/lfs/objects/batch`` (basic transfer; no ``actions`` when the object is
  already stored) and ``PUT /__lfs__/<oid>`` (sha256 and size are checked: 400 on mismatch);
- ``POST /api/<type>s/<id>/commit/<rev>`` (NDJSON: ``header``, ``file`` base64, ``lfsFile`` by oid,
  ``deletedFile``, ``deletedFolder``; ``create_pr=1`` opens ``refs/pr/<n>``); **every commit gets a new sha**;
- ``GET /api/<type>s/<id>[/revision/<rev>]`` (``sha``, ``siblings``, ``cardData`` …), ``GET …/tree/<rev>[/<path>]``
  (``recursive``), ``POST …/paths-info/<rev>`` (form or JSON), ``GET …/commits/<rev>``, ``GET …/refs``;
- ``HEAD``/``GET /[<type>s/]<id>/resolve/<rev>/<path>`` with ``ETag`` (git blob sha1, or the sha256 of an LFS
  file, also as ``X-Linked-Etag``), ``X-Repo-Commit``, ``Content-Length``, ``Range`` support, no body on HEAD;
  404 with ``X-Error-Code: EntryNotFound`` / ``RepoNotFound`` / ``RevisionNotFound``.

Writes need an ``Authorization: Bearer <token>`` header (any token, or exactly ``FakeHub(token=...)``); reads are
public. Only loopback addresses are ever bound.

The endpoint is read by the HF libraries **at import time**, so run the code under test in a subprocess::

    with FakeHub() as hub:
        subprocess.run([sys.executable, "-c", code], env=hub_env(hub.endpoint), check=True)
        assert "README.md" in hub.files("org/hf_recogs", "dataset")
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import itertools
import json
import os
import re
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple

REPO_TYPES = ("model", "dataset", "space")
_PREFIX_TO_TYPE = {"models": "model", "datasets": "dataset", "spaces": "space"}
LFS_SUFFIXES = (
    ".parquet", ".arrow", ".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".h5", ".msgpack", ".onnx", ".npy",
    ".npz", ".pkl", ".pickle", ".zip", ".gz", ".tar", ".tgz", ".xz", ".bz2", ".zst", ".model", ".tflite",
    ".ot", ".joblib", ".png", ".jpg", ".jpeg", ".wav", ".mp3",
)
LFS_MIN_SIZE = 10 * 1024 * 1024
_ACTIONS = {"revision", "tree", "paths-info", "preupload", "commit", "commits", "refs"}


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass(frozen=True)
class Blob:
    data: bytes
    lfs: bool

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def git_oid(self) -> str:
        """The git object id: the blob's sha1, or for an LFS file the sha1 of its pointer file."""
        return git_blob_sha1(self.pointer() if self.lfs else self.data)

    def pointer(self) -> bytes:
        return (
            f"version https://git-lfs.github.com/spec/v1\noid sha256:{self.sha256}\nsize {len(self.data)}\n"
        ).encode()


@dataclass
class Commit:
    sha: str
    title: str
    message: str
    date: str
    parent: str | None
    tree: dict[str, Blob]


@dataclass
class Repo:
    repo_type: str
    repo_id: str
    private: bool
    created: str
    refs: dict[str, str] = field(default_factory=dict)  # "main", "refs/pr/1" → commit sha
    commits: dict[str, Commit] = field(default_factory=dict)

    def resolve(self, revision: str) -> Commit | None:
        sha = self.refs.get(revision, revision)
        return self.commits.get(sha)


class Request(NamedTuple):
    method: str
    path: str
    status: int


class _HttpError(Exception):
    def __init__(self, status: int, message: str, code: str | None = None):
        super().__init__(message)
        self.status, self.message, self.code = status, message, code


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())


class FakeHub:
    """The fake Hub. ``with FakeHub() as hub:`` starts it; ``hub.endpoint`` is ``http://127.0.0.1:<port>``."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, token: str | None = None, user: str = "fake-user"):
        if not ipaddress.ip_address(host).is_loopback:
            raise ValueError(f"FakeHub binds loopback addresses only, not {host!r}")
        self.host, self.port, self.token, self.user = host, port, token, user
        self.repos: dict[tuple[str, str], Repo] = {}
        self.lfs_store: dict[str, bytes] = {}
        self.requests: list[Request] = []  # every request with its answer's status, for assertions
        self.fail_actions: set[str] = set()  # repo API actions (e.g. "preupload", "commit") answered with a 400 (not retried)
        self.lock = threading.RLock()
        self._counter = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ----------------------------------------------------------------------------------------- lifecycle
    @property
    def endpoint(self) -> str:
        if self._server is None:
            raise RuntimeError("FakeHub is not running; use it as a context manager or call start()")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeHub:
        hub = self

        class Handler(_Handler):
            fake = hub

        self._server = ThreadingHTTPServer((self.host, self.port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-hub", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._thread.join(timeout=5)
            self._server = None

    def __enter__(self) -> FakeHub:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # ------------------------------------------------------------------------------------- inspection
    def repo(self, repo_id: str, repo_type: str = "model") -> Repo:
        with self.lock:
            try:
                return self.repos[(repo_type, repo_id)]
            except KeyError:
                raise KeyError(f"no {repo_type} repo {repo_id!r} on the fake hub; have: {sorted(self.repos)}") from None

    def files(self, repo_id: str, repo_type: str = "model", revision: str = "main") -> dict[str, bytes]:
        """Path → content of every file of ``repo_id`` at ``revision`` (LFS files with their real content)."""
        with self.lock:
            commit = self.repo(repo_id, repo_type).resolve(revision)
            if commit is None:
                raise KeyError(f"{repo_type} repo {repo_id!r} has no revision {revision!r}")
            return {path: blob.data for path, blob in sorted(commit.tree.items())}

    def lfs_files(self, repo_id: str, repo_type: str = "model", revision: str = "main") -> set[str]:
        with self.lock:
            commit = self.repo(repo_id, repo_type).resolve(revision)
            return {path for path, blob in commit.tree.items() if blob.lfs}

    def commits(self, repo_id: str, repo_type: str = "model", revision: str = "main") -> list[Commit]:
        """Commits reachable from ``revision``, newest first."""
        with self.lock:
            repo = self.repo(repo_id, repo_type)
            out, commit = [], repo.resolve(revision)
            while commit is not None:
                out.append(commit)
                commit = repo.commits.get(commit.parent) if commit.parent else None
            return out

    # -------------------------------------------------------------------------------------- internals
    def _new_sha(self, seed: str) -> str:
        return hashlib.sha1(f"{seed}\0{next(self._counter)}\0{time.time_ns()}".encode()).hexdigest()

    def _create_repo(self, repo_type: str, repo_id: str, private: bool) -> Repo:
        repo = Repo(repo_type=repo_type, repo_id=repo_id, private=private, created=_now())
        sha = self._new_sha(f"{repo_type}/{repo_id}")
        repo.commits[sha] = Commit(sha, "initial commit", "", _now(), None, {})
        repo.refs["main"] = sha
        self.repos[(repo_type, repo_id)] = repo
        return repo


def _url_prefix(repo_type: str) -> str:
    return "" if repo_type == "model" else f"{repo_type}s/"


class _Handler(BaseHTTPRequestHandler):
    fake: FakeHub
    protocol_version = "HTTP/1.1"
    server_version = "FakeHub/1.0"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    # ------------------------------------------------------------------------------------------ I/O
    def _body(self) -> bytes:
        return self._request_body

    def _read_body(self) -> bytes:
        # Read every request body up front, even when the answer is an error: an unread body left on a
        # keep-alive connection would be parsed as the next request.
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None,
              content_type: str = "application/json", head: bool = False, length: int | None = None) -> None:
        with self.fake.lock:
            self.fake.requests.append(Request(*self._method_path, status))
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if body and not head:
            self.wfile.write(body)

    def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(payload).encode(), headers)

    def _error(self, err: _HttpError, head: bool = False) -> None:
        headers = {"X-Error-Message": err.message.encode("ascii", "backslashreplace").decode()}
        if err.code:
            headers["X-Error-Code"] = err.code
        body = b"" if head else json.dumps({"error": err.message}).encode()
        self._send(err.status, body, headers, head=head)

    def _require_token(self) -> None:
        auth = self.headers.get("Authorization", "")
        if not auth.startswith("Bearer ") or not auth[7:].strip():
            raise _HttpError(401, "Invalid credentials in Authorization header")
        if self.fake.token is not None and auth[7:].strip() != self.fake.token:
            raise _HttpError(401, "Invalid username or password.")

    # ---------------------------------------------------------------------------------------- dispatch
    def _dispatch(self, method: str) -> None:
        raw = self.path
        split = urllib.parse.urlsplit(raw)
        query = urllib.parse.parse_qs(split.query)
        self._method_path = (method, raw)
        self._request_body = self._read_body() if method in ("POST", "PUT", "DELETE") else b""
        head = method == "HEAD"
        try:
            path = split.path
            if path.startswith("/api/"):
                self._api(method, path[len("/api/"):], query)
            elif path.startswith("/__lfs__/") and method == "PUT":
                self._lfs_put(path[len("/__lfs__/"):])
            elif "/info/lfs/objects/batch" in path and method == "POST":
                self._lfs_batch(path)
            elif "/resolve/" in path and method in ("GET", "HEAD"):
                self._resolve(path, head)
            else:
                raise _HttpError(404, f"fake hub: no route for {method} {path}")
        except _HttpError as err:
            self._error(err, head=head)
        except Exception as err:  # noqa: BLE001 - report server bugs to the client, do not hang it
            self._error(_HttpError(500, f"fake hub internal error: {type(err).__name__}: {err}"), head=head)

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_HEAD(self) -> None:
        self._dispatch("HEAD")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    # ------------------------------------------------------------------------------------------ repos
    def _get_repo(self, repo_type: str, repo_id: str) -> Repo:
        repo = self.fake.repos.get((repo_type, repo_id))
        if repo is None:
            raise _HttpError(404, f"Repository not found: {repo_type} {repo_id}", "RepoNotFound")
        return repo

    def _get_commit(self, repo: Repo, revision: str) -> Commit:
        commit = repo.resolve(revision)
        if commit is None:
            raise _HttpError(404, f"Invalid rev id: {revision}", "RevisionNotFound")
        return commit

    def _api(self, method: str, rest: str, query: dict[str, list[str]]) -> None:
        if rest == "whoami-v2" and method == "GET":
            self._require_token()
            return self._json(200, {
                "type": "user", "id": "0" * 24, "name": self.fake.user, "fullname": "Fake User",
                "email": None, "emailVerified": False, "isPro": False, "orgs": [],
                "auth": {"type": "access_token", "accessToken": {"displayName": "fake", "role": "write"}},
            })
        if rest == "validate-yaml" and method == "POST":
            return self._validate_yaml()
        if rest == "repos/create" and method == "POST":
            return self._create_repo()
        if rest == "repos/delete" and method == "DELETE":
            self._require_token()
            payload = json.loads(self._body() or b"{}")
            repo_id = f"{payload['organization']}/{payload['name']}" if payload.get("organization") else payload["name"]
            with self.fake.lock:
                self._get_repo(payload.get("type") or "model", repo_id)
                del self.fake.repos[(payload.get("type") or "model", repo_id)]
            return self._json(200, {})
        prefix, _, tail = rest.partition("/")
        repo_type = _PREFIX_TO_TYPE.get(prefix)
        if repo_type is None or not tail:
            raise _HttpError(404, f"fake hub: no route for /api/{rest}")
        segs = [urllib.parse.unquote(s) for s in tail.split("/")]
        raw_segs = tail.split("/")
        for n in (2, 1):
            if len(segs) > n and segs[n] in _ACTIONS:
                repo_id, action, args = "/".join(segs[:n]), segs[n], raw_segs[n + 1:]
                break
        else:
            if len(segs) > 2:
                raise _HttpError(404, f"fake hub: no route for /api/{rest}")
            repo_id, action, args = "/".join(segs), "info", []
        with self.fake.lock:
            repo = self._get_repo(repo_type, repo_id)
        revision = urllib.parse.unquote(args[0]) if args else "main"
        sub = "/".join(urllib.parse.unquote(a) for a in args[1:])
        if action in self.fake.fail_actions:
            raise _HttpError(400, f"fake hub: {action} fails on purpose (fail_actions)")
        if action in ("info", "revision") and method == "GET":
            return self._repo_info(repo, revision)
        if action == "tree" and method == "GET":
            recursive = (query.get("recursive") or ["false"])[0].lower() in ("1", "true")
            return self._tree(repo, revision, sub.strip("/"), recursive)
        if action == "paths-info" and method == "POST":
            return self._paths_info(repo, revision)
        if action == "preupload" and method == "POST":
            self._require_token()
            return self._preupload(repo, revision)
        if action == "commit" and method == "POST":
            self._require_token()
            return self._commit(repo, revision, create_pr=(query.get("create_pr") or ["0"])[0] in ("1", "true"))
        if action == "commits" and method == "GET":
            with self.fake.lock:
                commits = self.fake.commits(repo.repo_id, repo.repo_type, revision) if repo.resolve(revision) else None
            if commits is None:
                raise _HttpError(404, f"Invalid rev id: {revision}", "RevisionNotFound")
            return self._json(200, [
                {"id": c.sha, "title": c.title, "message": c.message, "date": c.date,
                 "authors": [{"user": self.fake.user}]}
                for c in commits
            ])
        if action == "refs" and method == "GET":
            with self.fake.lock:
                refs = dict(repo.refs)

            def ref(name: str, sha: str) -> dict:
                full = name if name.startswith("refs/") else f"refs/heads/{name}"
                return {"name": name.split("/")[-1] if name.startswith("refs/pr/") else name,
                        "ref": full, "targetCommit": sha}

            return self._json(200, {
                "branches": [ref(n, s) for n, s in refs.items() if not n.startswith("refs/")],
                "converts": [], "tags": [],
                "pullRequests": [ref(n, s) for n, s in refs.items() if n.startswith("refs/pr/")],
            })
        raise _HttpError(405, f"fake hub: {method} not supported on /api/{rest}")

    def _create_repo(self) -> None:
        self._require_token()
        payload = json.loads(self._body() or b"{}")
        repo_type = payload.get("type") or "model"
        if repo_type not in REPO_TYPES:
            raise _HttpError(400, f"unknown repo type {repo_type!r}")
        namespace = payload.get("organization") or self.fake.user
        repo_id = f"{namespace}/{payload['name']}"
        private = payload.get("private") is True or payload.get("visibility") == "private"
        url = f"{self.fake.endpoint}/{_url_prefix(repo_type)}{repo_id}"
        with self.fake.lock:
            if (repo_type, repo_id) in self.fake.repos:
                # Like the Hub: 409, with the url in the body (create_repo(exist_ok=True) reads it).
                message = "You already created this repo"
                return self._json(409, {"error": message, "url": url}, {"X-Error-Message": message})
            self.fake._create_repo(repo_type, repo_id, private)
        self._json(200, {"url": url, "name": repo_id, "id": repo_id})

    def _validate_yaml(self) -> None:
        payload = json.loads(self._body() or b"{}")
        content = payload.get("content", "")
        match = re.match(r"^\s*---\s*\n(.*?)\n---\s*(\n|$)", content, re.DOTALL)
        if match:
            try:
                import yaml

                data = yaml.safe_load(match.group(1))
                if data is not None and not isinstance(data, dict):
                    raise ValueError("the front matter must be a mapping")
            except ImportError:
                pass
            except Exception as err:  # noqa: BLE001
                body = {"errors": [{"message": f"Invalid YAML: {err}"}], "warnings": []}
                return self._send(400, json.dumps(body).encode(), {"X-Error-Message": "Invalid metadata"})
        self._json(200, {"errors": [], "warnings": []})

    # ------------------------------------------------------------------------------------------- read
    def _file_entry(self, path: str, blob: Blob, commit: Commit) -> dict:
        entry: dict[str, Any] = {"type": "file", "oid": blob.git_oid, "size": len(blob.data), "path": path}
        if blob.lfs:
            entry["lfs"] = {"oid": blob.sha256, "size": len(blob.data), "pointerSize": len(blob.pointer())}
        entry["lastCommit"] = {"id": commit.sha, "title": commit.title, "date": commit.date}
        return entry

    def _folder_entry(self, path: str, commit: Commit) -> dict:
        return {"type": "directory", "oid": git_blob_sha1(f"tree {path} {commit.sha}".encode()), "size": 0,
                "path": path, "lastCommit": {"id": commit.sha, "title": commit.title, "date": commit.date}}

    def _repo_info(self, repo: Repo, revision: str) -> None:
        with self.fake.lock:
            commit = self._get_commit(repo, revision)
            tree = dict(commit.tree)
        card = None
        if "README.md" in tree:
            text = tree["README.md"].data.decode("utf-8", "replace")
            match = re.match(r"^\s*---\s*\n(.*?)\n---\s*(\n|$)", text, re.DOTALL)
            if match:
                try:
                    import yaml

                    card = yaml.safe_load(match.group(1))
                except Exception:  # noqa: BLE001
                    card = None
        siblings = []
        for path, blob in sorted(tree.items()):
            sibling: dict[str, Any] = {"rfilename": path, "size": len(blob.data), "blobId": blob.git_oid}
            if blob.lfs:
                sibling["lfs"] = {"size": len(blob.data), "sha256": blob.sha256, "pointerSize": len(blob.pointer())}
            siblings.append(sibling)
        info = {
            "_id": hashlib.sha1(repo.repo_id.encode()).hexdigest()[:24], "id": repo.repo_id,
            "author": repo.repo_id.split("/")[0] if "/" in repo.repo_id else None,
            "sha": commit.sha, "lastModified": commit.date, "createdAt": repo.created,
            "private": repo.private, "gated": False, "disabled": False, "downloads": 0, "likes": 0,
            "tags": [], "siblings": siblings, "usedStorage": sum(len(b.data) for b in tree.values()),
        }
        if card is not None:
            info["cardData"] = card
        if repo.repo_type == "model":
            info["modelId"] = repo.repo_id
        self._json(200, info)

    def _tree(self, repo: Repo, revision: str, folder: str, recursive: bool) -> None:
        with self.fake.lock:
            commit = self._get_commit(repo, revision)
            tree = dict(commit.tree)
        prefix = f"{folder}/" if folder else ""
        if folder and not any(p.startswith(prefix) for p in tree):
            if folder in tree:
                raise _HttpError(400, f"{folder} is a file, not a folder")
            raise _HttpError(404, f"Entry not found: {folder}", "EntryNotFound")
        files, folders = [], set()
        for path, blob in sorted(tree.items()):
            if not path.startswith(prefix):
                continue
            rel = path[len(prefix):]
            parts = rel.split("/")
            for depth in range(1, len(parts)):
                if recursive or depth == 1:
                    folders.add(prefix + "/".join(parts[:depth]))
            if recursive or len(parts) == 1:
                files.append(self._file_entry(path, blob, commit))
        entries = [self._folder_entry(f, commit) for f in sorted(folders)] + files
        self._json(200, entries)

    def _paths_info(self, repo: Repo, revision: str) -> None:
        body = self._body()
        ctype = self.headers.get("Content-Type", "")
        if "json" in ctype:
            paths = json.loads(body or b"{}").get("paths", [])
        else:
            paths = urllib.parse.parse_qs(body.decode()).get("paths", [])
        paths = [paths] if isinstance(paths, str) else paths
        with self.fake.lock:
            commit = self._get_commit(repo, revision)
            tree = dict(commit.tree)
        out = []
        for path in paths:
            path = path.strip("/")
            if path in tree:
                out.append(self._file_entry(path, tree[path], commit))
            elif any(p.startswith(path + "/") for p in tree):
                out.append(self._folder_entry(path, commit))
        self._json(200, out)

    def _resolve(self, path: str, head: bool) -> None:
        match = re.match(r"^/(?:(models|datasets|spaces)/)?([^/]+(?:/[^/]+)?)/resolve/([^/]+)/(.+)$", path)
        if not match:
            raise _HttpError(404, f"fake hub: bad resolve path {path}")
        repo_type = _PREFIX_TO_TYPE.get(match.group(1) or "models")
        repo_id = urllib.parse.unquote(match.group(2))
        revision = urllib.parse.unquote(match.group(3))
        filename = urllib.parse.unquote(match.group(4))
        with self.fake.lock:
            repo = self._get_repo(repo_type, repo_id)
            commit = self._get_commit(repo, revision)
            blob = commit.tree.get(filename)
        if blob is None:
            raise _HttpError(404, f"Entry not found: {filename}", "EntryNotFound")
        etag = f'"{blob.sha256 if blob.lfs else blob.git_oid}"'
        headers = {"ETag": etag, "X-Repo-Commit": commit.sha, "Accept-Ranges": "bytes"}
        if blob.lfs:
            headers["X-Linked-Etag"] = etag
            headers["X-Linked-Size"] = str(len(blob.data))
        data, status = blob.data, 200
        rng = self.headers.get("Range")
        if rng and not head:
            m = re.match(r"bytes=(\d*)-(\d*)$", rng.strip())
            if m:
                size = len(data)
                if m.group(1) == "":
                    start, end = max(0, size - int(m.group(2) or 0)), size - 1
                else:
                    start = int(m.group(1))
                    end = min(int(m.group(2)), size - 1) if m.group(2) else size - 1
                if start >= size and size > 0:
                    headers["Content-Range"] = f"bytes */{size}"
                    return self._send(416, b"", headers, content_type="application/octet-stream")
                headers["Content-Range"] = f"bytes {start}-{end}/{size}"
                data, status = data[start:end + 1], 206
        self._send(status, data, headers, content_type="application/octet-stream", head=head,
                   length=len(data))

    # ------------------------------------------------------------------------------------------ write
    def _preupload(self, repo: Repo, revision: str) -> None:
        payload = json.loads(self._body() or b"{}")
        with self.fake.lock:
            commit = repo.resolve(revision) or repo.resolve("main")
            tree = dict(commit.tree)
        files = []
        for item in payload.get("files", []):
            path = item["path"]
            sample = base64.b64decode(item.get("sample", ""))
            lfs = (path.lower().endswith(LFS_SUFFIXES) or int(item.get("size", 0)) >= LFS_MIN_SIZE
                   or b"\0" in sample)
            existing = tree.get(path)
            oid = None
            if existing is not None:
                oid = existing.sha256 if existing.lfs else git_blob_sha1(existing.data)
            files.append({"path": path, "uploadMode": "lfs" if lfs else "regular", "shouldIgnore": False,
                          "oid": oid})
        self._json(200, {"files": files, "commitOid": commit.sha})

    def _lfs_batch(self, path: str) -> None:
        self._require_token()
        payload = json.loads(self._body() or b"{}")
        objects = []
        for obj in payload.get("objects", []):
            oid, size = obj["oid"], int(obj["size"])
            entry: dict[str, Any] = {"oid": oid, "size": size, "authenticated": True}
            with self.fake.lock:
                have = oid in self.fake.lfs_store
            if not have:
                entry["actions"] = {"upload": {"href": f"{self.fake.endpoint}/__lfs__/{oid}?size={size}",
                                               "header": {}}}
            objects.append(entry)
        self._send(200, json.dumps({"transfer": "basic", "objects": objects, "hash_algo": "sha256"}).encode(),
                   content_type="application/vnd.git-lfs+json")

    def _lfs_put(self, rest: str) -> None:
        oid, _, query = rest.partition("?")
        data = self._body()
        size = urllib.parse.parse_qs(query).get("size", [None])[0]
        if hashlib.sha256(data).hexdigest() != oid:
            raise _HttpError(400, f"LFS upload: sha256 of the body is not {oid}")
        if size is not None and int(size) != len(data):
            raise _HttpError(400, f"LFS upload: got {len(data)} bytes, expected {size}")
        with self.fake.lock:
            self.fake.lfs_store[oid] = data
        self._send(200, b"")

    def _commit(self, repo: Repo, revision: str, create_pr: bool) -> None:
        body = self._body()
        ops = [json.loads(line) for line in body.splitlines() if line.strip()]
        header = next((op["value"] for op in ops if op.get("key") == "header"), {})
        with self.fake.lock:
            parent = self._get_commit(repo, revision)
            expected = header.get("parentCommit")
            if expected and expected != parent.sha:
                raise _HttpError(412, f"parentCommit {expected} is not the head {parent.sha} of {revision}")
            tree = dict(parent.tree)
            for op in ops:
                key, value = op.get("key"), op.get("value", {})
                if key == "file":
                    raw = value["content"]
                    data = base64.b64decode(raw) if value.get("encoding", "base64") == "base64" else raw.encode()
                    tree[value["path"]] = Blob(data, lfs=False)
                elif key == "lfsFile":
                    data = self.fake.lfs_store.get(value["oid"])
                    if data is None:
                        raise _HttpError(422, f"LFS object {value['oid']} for {value['path']} was never uploaded")
                    tree[value["path"]] = Blob(data, lfs=True)
                elif key == "deletedFile":
                    if value["path"] not in tree:
                        raise _HttpError(404, f"A file with this name doesn't exist: {value['path']}",
                                         "EntryNotFound")
                    del tree[value["path"]]
                elif key == "deletedFolder":
                    folder = value["path"].rstrip("/") + "/"
                    for p in [p for p in tree if p.startswith(folder)]:
                        del tree[p]
                elif key != "header":
                    raise _HttpError(400, f"fake hub: unsupported commit operation {key!r}")
            sha = self.fake._new_sha(f"{repo.repo_type}/{repo.repo_id}")
            repo.commits[sha] = Commit(sha, header.get("summary", ""), header.get("description", ""), _now(),
                                       parent.sha, tree)
            pr_url = None
            base = f"{self.fake.endpoint}/{_url_prefix(repo.repo_type)}{repo.repo_id}"
            if create_pr:
                number = 1 + sum(1 for ref in repo.refs if ref.startswith("refs/pr/"))
                repo.refs[f"refs/pr/{number}"] = sha
                pr_url = f"{base}/discussions/{number}"
            else:
                repo.refs[revision if revision in repo.refs or revision == "main" else "main"] = sha
        self._json(200, {"success": True, "commitOid": sha, "commitUrl": f"{base}/commit/{sha}",
                         "pullRequestUrl": pr_url})


def hub_env(endpoint: str, token: str | None = "fake-token", *, hf_home: str | os.PathLike | None = None,
            base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a subprocess that talks to the fake Hub at ``endpoint``.

    Starts from ``base`` (default: ``os.environ``), points the HF libraries at ``endpoint``, turns their offline
    switches off (the fake is local), disables Xet (so uploads use the LFS protocol the fake speaks), telemetry
    and download counts, and keeps any proxy away from loopback. ``token=None`` removes every token variable
    (to test the missing-token path). ``hf_home`` gives the subprocess its own cache.
    """
    host = urllib.parse.urlsplit(endpoint).hostname or ""
    if not ipaddress.ip_address(host).is_loopback:
        raise ValueError(f"hub_env: {endpoint} is not a loopback address")
    env = dict(os.environ if base is None else base)
    for var in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH"):
        env.pop(var, None)
    env.update({
        "HF_ENDPOINT": endpoint,
        "HF_HUB_DISABLE_XET": "1",
        "HF_HUB_OFFLINE": "0",
        "HF_DATASETS_OFFLINE": "0",
        "TRANSFORMERS_OFFLINE": "0",
        "HF_UPDATE_DOWNLOAD_COUNTS": "0",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
        "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",
        "HF_HUB_DISABLE_IMPLICIT_TOKEN": "0",
        "HF_HUB_ETAG_TIMEOUT": "10",
        "HF_HUB_DOWNLOAD_TIMEOUT": "30",
    })
    no_proxy = ",".join(filter(None, [env.get("NO_PROXY") or env.get("no_proxy"), "127.0.0.1", "localhost", "::1"]))
    env["NO_PROXY"] = env["no_proxy"] = no_proxy
    if token is not None:
        env["HF_TOKEN"] = token
    else:
        # Also hide a token saved by `hf auth login`: it lives under HF_HOME.
        env["HF_TOKEN_PATH"] = os.path.join(str(hf_home or env.get("HF_HOME") or "/nonexistent"), "no-token")
    if hf_home is not None:
        env["HF_HOME"] = str(hf_home)
    return env


__all__ = ["FakeHub", "hub_env", "git_blob_sha1", "Blob", "Commit", "Repo", "Request"]
