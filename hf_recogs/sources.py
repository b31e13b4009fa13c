"""Pinned upstream files: where they come from, how they are verified, how they are read.

Every byte of benchmark data that hf_recogs loads comes from one of the files listed in
``upstream_files.tsv`` (repository, commit, path, git blob SHA-1 and/or SHA-256), or from one of the
``RELEASE_FILES`` below (a dataset's own release at a fixed https address, outside GitHub, pinned by size and
SHA-256). A file is read from, in order: a mirror folder named by ``HF_RECOGS_MIRROR`` (layout
``<owner>/<repo>/<commit>/<path>``, or the address without ``https://`` for a release file; plain or
``.gz``), our download cache, or its download address. Whatever the origin, the content is checked against
its pin before anyone sees it; nothing unverified is loaded. Files too large to hold in memory (a release
tarball) are read from disk: :func:`fetch_path` gives a verified local copy.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import logging
import os
import shutil
import tempfile
import urllib.error
import urllib.request
import zlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

MIRROR_ENV = "HF_RECOGS_MIRROR"
CACHE_ENV = "HF_RECOGS_CACHE"
RAW_URL = "https://raw.githubusercontent.com/{repo}/{commit}/{path}"

# The pinned upstream revisions (docs/DATASETS.md §1.1). Keys are what the rest of the package uses.
PINS: dict[str, tuple[str, str]] = {
    "cogs": ("najoungkim/COGS", "165a7b669eade971fa47bf568a2e51925360fed8"),
    "cogs_2020": ("najoungkim/COGS", "6f663835897945e94fd330c8cbebbdc494fbb690"),
    "recogs": ("frankaging/ReCOGS", "1b6eca8ff4dca5fd2fb284a7d470998af5083beb"),
    "scan": ("brendenlake/SCAN", "c4b756cbc010d75c912f16c42c8f15dc6b7e6c8f"),
    "scan_mcd": ("brendenlake/SCAN", "9da9c8af84509a66e10dfbdfefb3d1e83f3d0bea"),
    "sygns": ("verypluming/SyGNS", "73f3876bc6057abb19b97ae7437f9c6ceb049885"),
    "slog": ("bingzhilee/SLOG", "1c55df85006d58b842520c79dcb8e1b43df2836f"),
    "cfq_mcd1": ("thousfeet/LEAR", "e26c9d875c593de6e2e51b9d66f65c6f07be9575"),  # CFQ's MCD1 split, as LEAR keeps it
    # the structure-annotation paper's own 50/25/25 splits of CFQ (index files into the CFQ release)
    "cfq_kim2021_splits": ("dalgu90/compositionality-classification", "ed93da47140b7ffe8d3f21926af22307e217856a"),
}


# Each upstream repository's licence notice, which every copy of its data must carry (docs/DATASETS.md §1.1).
LICENCE_NOTICES: dict[str, str] = {
    "najoungkim/COGS": "COGS: MIT, © 2020 najoungkim",
    "frankaging/ReCOGS": "ReCOGS: MIT, © 2023 Zhengxuan Wu (data derived from COGS; keep both notices)",
    "brendenlake/SCAN": "SCAN: BSD 3-clause, © 2016-present Facebook (no endorsement clause)",
    "bingzhilee/SLOG": "SLOG: MIT, © 2023 Bingzhi Li",
    "verypluming/SyGNS": "SyGNS: CC BY-SA 4.0, © Hitomi Yanaka et al.; derived data stays CC BY-SA 4.0",
    "thousfeet/LEAR": "CFQ (MCD1 split, copy kept by LEAR): © Google LLC; CFQ's README says CC BY 4.0, its dataset "
                      "metadata CC BY-SA 3.0: treated as CC BY-SA 3.0",
    "storage.googleapis.com/cfq_dataset": "CFQ (official release): © Google LLC; CFQ's README says CC BY 4.0, its "
                                          "dataset metadata CC BY-SA 3.0: treated as CC BY-SA 3.0",
    "dalgu90/compositionality-classification": "CFQ split index files of Kim et al. (2021): Apache 2.0",
}

class SourceError(RuntimeError):
    """An upstream file could not be had or did not verify. The message is one line that names the fix."""


class SourceUnavailable(SourceError):
    """The file is in no mirror, not cached, and cannot be downloaded (offline or unreachable)."""


class ChecksumMismatch(SourceError):
    """The bytes found do not match the pinned checksum (truncated, corrupt or a different revision)."""


@dataclass(frozen=True)
class UpstreamFile:
    """A pinned file: ``path`` in GitHub repository ``repo`` at ``commit``, or, when ``commit`` is empty, a
    release file at the fixed address ``https://<repo>/<path>`` (``repo`` is then the address's host and
    folder), which only its size and SHA-256 pin."""

    repo: str
    commit: str
    path: str
    git_blob: str | None
    sha256: str | None
    size: int | None

    @property
    def is_release(self) -> bool:
        return not self.commit

    @property
    def url(self) -> str:
        if self.is_release:
            return f"https://{self.repo}/{self.path}"
        return RAW_URL.format(repo=self.repo, commit=self.commit, path=self.path)

    @property
    def relpath(self) -> str:
        """Path inside a mirror or cache folder: the download address without its host (a raw GitHub
        address) or without ``https://`` (a release file)."""
        if self.is_release:
            return f"{self.repo}/{self.path}"
        return f"{self.repo}/{self.commit}/{self.path}"

    def __str__(self) -> str:
        if self.is_release:
            return self.relpath
        return f"{self.repo}@{self.commit[:7]}:{self.path}"

    def expected(self) -> str:
        if self.sha256:
            return f"sha256 {self.sha256}"
        return f"git blob {self.git_blob}"

    def problem(self, data: bytes) -> str | None:
        """Why ``data`` is not this file, or None when it verifies."""
        if self.size is not None and len(data) != self.size:
            return self.size_problem(len(data))
        return self.digest_problem(hashlib.sha256(data).hexdigest() if self.sha256 else None,
                                   git_blob_sha1(data) if self.git_blob else None)

    def size_problem(self, size: int) -> str:
        return f"has {size} bytes, expected {self.size} (truncated or wrong file)"

    def digest_problem(self, sha256: str | None, git_blob: str | None) -> str | None:
        """Why content with these digests is not this file (each digest is checked where the pin has one)."""
        if self.sha256 and sha256 != self.sha256:
            return f"sha256 is {sha256}, expected {self.sha256}"
        if self.git_blob and git_blob != self.git_blob:
            return f"git blob sha1 is {git_blob}, expected {self.git_blob}"
        return None


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


# Dataset releases published outside GitHub, at a fixed address; the mirror's registry table has no row for
# them, so they are pinned here. The CFQ release is the tarball that TensorFlow Datasets' ``cfq`` builder
# downloads (docs/DATASETS.md §8.5).
RELEASE_FILES: dict[str, UpstreamFile] = {
    "cfq": UpstreamFile(
        repo="storage.googleapis.com/cfq_dataset",
        commit="",
        path="cfq.tar.gz",
        git_blob=None,
        sha256="979d719271eae12611643b89151f639d94092800e7e71f2d23a754c43f3eb1ba",
        size=267_599_061,
    ),
}
# Files above this size are never held in memory by fetch_bytes's cache; readers use fetch_path instead.
LARGE_FILE_BYTES = 64 * 2**20


@lru_cache(maxsize=1)
def _registry() -> dict[tuple[str, str, str], UpstreamFile]:
    table = Path(__file__).with_name("upstream_files.tsv")
    out = {}
    with open(table, newline="", encoding="utf-8") as handle:
        for rec in csv.DictReader(handle, delimiter="\t"):
            def opt(value: str) -> str | None:
                return None if value == "-" else value

            size = opt(rec["bytes"])
            out[(rec["repo"], rec["commit"], rec["path"])] = UpstreamFile(
                repo=rec["repo"],
                commit=rec["commit"],
                path=rec["path"],
                git_blob=opt(rec["git_blob_sha1"]),
                sha256=opt(rec["sha256"]),
                size=int(size) if size else None,
            )
    return out


def pinned(source: str, path: str) -> UpstreamFile:
    """The registry entry of ``path`` in the pinned revision ``source`` (a key of ``PINS``)."""
    if source not in PINS:
        raise KeyError(f"unknown upstream source {source!r}; known: {', '.join(PINS)}")
    repo, commit = PINS[source]
    try:
        return _registry()[(repo, commit, path)]
    except KeyError:
        raise KeyError(f"{repo}@{commit[:7]}:{path} is not in hf_recogs/upstream_files.tsv") from None


def mirror_dir() -> Path | None:
    value = os.environ.get(MIRROR_ENV)
    return Path(value).expanduser() if value else None


def cache_dir() -> Path:
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    hf_home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "huggingface"
    )
    return Path(hf_home) / "hf_recogs" / "downloads"


def offline() -> bool:
    for var in ("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE"):
        value = os.environ.get(var)
        if value is not None and value.strip() != "":
            return value.strip().upper() in {"1", "ON", "YES", "TRUE"}
    return False


def _read_mirror(file: UpstreamFile) -> tuple[bytes, Path] | None:
    root = mirror_dir()
    if root is None:
        return None
    plain = root / file.relpath
    if plain.is_file():
        return plain.read_bytes(), plain
    packed = plain.with_name(plain.name + ".gz")
    if packed.is_file():
        try:
            return gzip.decompress(packed.read_bytes()), packed
        except (OSError, EOFError, zlib.error) as err:  # zlib.error: a flipped bit in the deflate stream
            raise ChecksumMismatch(
                f"hf_recogs: {packed} is not a readable gzip file ({err}); restore it from {file.url}"
            ) from None
    return None


def _cannot_download(file: UpstreamFile, err: Exception) -> SourceUnavailable:
    return SourceUnavailable(
        f"hf_recogs: cannot download {file} from {file.url} ({err}); "
        f"check the network, or set {MIRROR_ENV} to a mirror folder that holds {file.relpath}"
    )


def _not_here_offline(file: UpstreamFile, removed: str) -> SourceUnavailable:
    where = f"the mirror {mirror_dir()}" if mirror_dir() else f"a mirror ({MIRROR_ENV} is not set)"
    return SourceUnavailable(
        f"hf_recogs: {removed}{file} ({file.expected()}) is not in {where} nor in the cache {cache_dir()}, "
        f"and HF offline mode is on; set {MIRROR_ENV} to a folder holding {file.relpath}, "
        f"or go online to download {file.url}"
    )


def _download(file: UpstreamFile, target: Path) -> bytes:
    try:
        with urllib.request.urlopen(file.url, timeout=60) as response:
            data = response.read()
    except (urllib.error.URLError, OSError) as err:
        raise _cannot_download(file, err) from None
    problem = file.problem(data)
    if problem:
        raise ChecksumMismatch(f"hf_recogs: download of {file} from {file.url} {problem}; nothing was loaded")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=target.parent, delete=False) as tmp:
        tmp.write(data)
    os.replace(tmp.name, target)
    return data


@lru_cache(maxsize=64)
def _fetch_in_memory(file: UpstreamFile) -> bytes:
    found = _read_mirror(file)
    if found is not None:
        data, where = found
        problem = file.problem(data)
        if problem:
            raise ChecksumMismatch(
                f"hf_recogs: {where} {problem}; replace it with the file from {file.url}, "
                f"or unset {MIRROR_ENV} to download it"
            )
        return data
    cached = cache_dir() / file.relpath
    removed = ""
    if cached.is_file():
        data = cached.read_bytes()
        problem = file.problem(data)
        if problem is None:
            return data
        cached.unlink()  # a corrupt cache entry is never used; fetch it again
        removed = f"the cached copy {cached} failed verification ({problem}) and was removed; "
    if offline():
        raise _not_here_offline(file, removed)
    if removed:
        import warnings

        warnings.warn(f"hf_recogs: {removed}downloading {file.url} again", stacklevel=3)
    return _download(file, cached)


def is_large(file: UpstreamFile) -> bool:
    return file.size is not None and file.size > LARGE_FILE_BYTES


def fetch_bytes(file: UpstreamFile) -> bytes:
    """The verified content of ``file``: from the mirror, the cache, or a download, in that order. Small files
    stay cached in memory; a large one is read from its verified local copy (:func:`fetch_path`) each time."""
    if is_large(file):
        return fetch_path(file).read_bytes()
    return _fetch_in_memory(file)


# ---- large files, read from disk -------------------------------------------------------------------------

_CHUNK = 2**20
_VERIFIED_PATHS: set[tuple[UpstreamFile, str, int, int]] = set()  # (pin, path, size, mtime) checked already


def _path_key(file: UpstreamFile, path: Path) -> tuple[UpstreamFile, str, int, int]:
    stat = path.stat()
    return file, str(path), stat.st_size, stat.st_mtime_ns


def _path_problem(file: UpstreamFile, path: Path) -> str | None:
    """Why the file at ``path`` is not ``file`` (hashed in chunks), or None; a verified copy is not hashed
    again until it changes."""
    key = _path_key(file, path)
    if key in _VERIFIED_PATHS:
        return None
    size = key[2]
    if file.size is not None and size != file.size:
        return file.size_problem(size)
    sha256, blob = hashlib.sha256(), hashlib.sha1(b"blob %d\0" % size)
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            sha256.update(chunk)
            if file.git_blob:
                blob.update(chunk)
    problem = file.digest_problem(sha256.hexdigest(), blob.hexdigest())
    if problem is None:
        _VERIFIED_PATHS.add(key)
    return problem


def _unpack_mirror_gz(file: UpstreamFile, packed: Path, target: Path) -> Path:
    """The mirror's ``.gz`` copy unpacked into ``target`` (the cache) and verified there."""
    if target.is_file() and _path_problem(file, target) is None:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=target.parent, delete=False) as tmp:
        try:
            with gzip.open(packed) as source:
                shutil.copyfileobj(source, tmp, _CHUNK)
        except (OSError, EOFError, zlib.error) as err:
            os.unlink(tmp.name)
            raise ChecksumMismatch(
                f"hf_recogs: {packed} is not a readable gzip file ({err}); restore it from {file.url}"
            ) from None
    _install_verified(file, Path(tmp.name), target, f"{packed} unpacks to a file that")
    return target


def _download_to(file: UpstreamFile, target: Path) -> None:
    """Download ``file`` into ``target`` in chunks; nothing stays there unless it verifies."""
    logging.getLogger(__name__).warning(
        "hf_recogs: downloading %s (%s bytes) into %s", file.url, f"{file.size:,}" if file.size else "?", target)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=target.parent, delete=False) as tmp:
        try:
            with urllib.request.urlopen(file.url, timeout=60) as response:
                shutil.copyfileobj(response, tmp, _CHUNK)
        except BaseException as err:
            os.unlink(tmp.name)
            if isinstance(err, (urllib.error.URLError, OSError)):
                raise _cannot_download(file, err) from None
            raise
    _install_verified(file, Path(tmp.name), target, f"download of {file} from {file.url}")


def _install_verified(file: UpstreamFile, fresh: Path, target: Path, what: str) -> None:
    problem = _path_problem(file, fresh)
    if problem:
        fresh.unlink()
        raise ChecksumMismatch(f"hf_recogs: {what} {problem}; nothing was loaded")
    os.replace(fresh, target)
    _VERIFIED_PATHS.add(_path_key(file, target))


def fetch_path(file: UpstreamFile) -> Path:
    """A verified local copy of ``file``, for files too large to read into memory (a release tarball): the
    mirror's plain copy, else the cache's, which a mirror ``.gz`` copy is unpacked into or a download written
    to, in chunks. Raises like :func:`fetch_bytes`: SourceUnavailable (one line, naming the fix) offline
    without a copy, ChecksumMismatch for a copy that does not verify."""
    root = mirror_dir()
    cached = cache_dir() / file.relpath
    if root is not None:
        plain = root / file.relpath
        if plain.is_file():
            problem = _path_problem(file, plain)
            if problem:
                raise ChecksumMismatch(
                    f"hf_recogs: {plain} {problem}; replace it with the file from {file.url}, "
                    f"or unset {MIRROR_ENV} to download it"
                )
            return plain
        packed = plain.with_name(plain.name + ".gz")
        if packed.is_file():
            return _unpack_mirror_gz(file, packed, cached)
    removed = ""
    if cached.is_file():
        problem = _path_problem(file, cached)
        if problem is None:
            return cached
        cached.unlink()
        removed = f"the cached copy {cached} failed verification ({problem}) and was removed; "
    if offline():
        raise _not_here_offline(file, removed)
    _download_to(file, cached)
    return cached


def _clear_caches() -> None:
    """Forget the in-memory copies and which local copies were verified (tests that rewrite files call this
    as ``fetch_bytes.cache_clear()``)."""
    _fetch_in_memory.cache_clear()
    _VERIFIED_PATHS.clear()


fetch_bytes.cache_clear = _clear_caches  # type: ignore[attr-defined]


def read_text(file: UpstreamFile) -> str:
    return fetch_bytes(file).decode("utf-8")


def read_lines(file: UpstreamFile) -> list[str]:
    """Lines without their ``\\n`` terminator (every upstream text file ends each line with one)."""
    text = read_text(file)
    return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")


def read_tsv(file: UpstreamFile) -> list[list[str]]:
    """Rows of a headerless TAB-separated file, fields unquoted, exactly as written upstream."""
    return [line.split("\t") for line in read_lines(file)]


def open_zip_member(file: UpstreamFile, member: str, password: bytes | None = None) -> bytes:
    """One member of a verified zip archive (SLOG keeps its generalization sets encrypted in one)."""
    import zipfile

    with zipfile.ZipFile(io.BytesIO(fetch_bytes(file))) as archive:
        try:
            return archive.read(member, pwd=password)
        except KeyError:
            raise SourceError(
                f"hf_recogs: {file} has no member {member!r}; members: {', '.join(archive.namelist())}"
            ) from None


def is_available(file: UpstreamFile) -> bool:
    """Whether ``file`` can be had right now without raising (mirror, cache, or online)."""
    root = mirror_dir()
    if root is not None:
        plain = root / file.relpath
        if plain.is_file() or plain.with_name(plain.name + ".gz").is_file():
            return True
    if (cache_dir() / file.relpath).is_file():
        return True
    return not offline()
