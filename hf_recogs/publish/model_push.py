"""Publish a trained model folder (``outputs/<config>/seed_<n>``) to the Hugging Face Hub with our model card.

    hf-recogs push outputs/<config>/seed_<n> USER/REPO [--private] [--endpoint URL]

(``python -m hf_recogs.publish.model_push`` takes the same arguments.)

``push(output_dir, repo_id)`` uploads the model, tokenizer, config, generation config, ``results.json``,
the predictions, ``per_category.png`` and ``README.md`` (re-rendered from ``model_cards/template.md`` with the
final repo id, in a staging folder: the local folder is never written) in one commit through
``HfApi.upload_folder``. It never calls ``Trainer.push_to_hub``, whose
auto-generated card would replace ours. Training checkpoints and pickled training state are not uploaded.

Failures (no token, unreachable endpoint, offline mode, rejected token) raise :class:`HubPushError` with a
one-line message; the local folder is left as it was.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from ..report.card import example_input, render_model_card

IGNORE_PATTERNS = ["checkpoint-*", "checkpoint-*/**", "runs/**", "*.pt", "*.pth", "training_args.bin", ".*"]
REQUIRED = ("config.json", "results.json")


class HubPushError(RuntimeError):
    """Pushing to the Hub failed; the message is one line and names the fix."""


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def push(
    output_dir: str | os.PathLike,
    repo_id: str,
    token: str | None = None,
    endpoint: str | None = None,
    private: bool = False,
    commit_message: str | None = None,
) -> str:
    """Upload one trained model folder to ``repo_id``; returns the commit URL.

    ``token`` defaults to ``HF_TOKEN`` / the stored login; ``endpoint`` to ``HF_ENDPOINT`` / huggingface.co.
    """
    folder = Path(output_dir)
    missing = [name for name in REQUIRED if not (folder / name).is_file()]
    if not folder.is_dir() or missing:
        raise HubPushError(
            f"{folder} is not a finished training output (missing {', '.join(missing) or 'folder'}); "
            "train first with `accelerate launch train.py CONFIG.yaml`"
        )
    if not repo_id or repo_id.count("/") > 1:
        raise HubPushError(f"invalid repo id {repo_id!r}; use `name` or `user/name`")

    import huggingface_hub
    from huggingface_hub import HfApi, constants

    if constants.HF_HUB_OFFLINE:
        raise HubPushError(
            f"HF_HUB_OFFLINE is set, so nothing can be pushed; unset it and retry (local output in {folder} is intact)"
        )
    token = token or huggingface_hub.get_token()
    if not token:
        raise HubPushError(
            "no Hugging Face token: run `hf auth login`, set HF_TOKEN, or pass token=... "
            f"(local output in {folder} is intact)"
        )
    endpoint = endpoint or constants.ENDPOINT
    api = HfApi(endpoint=endpoint, token=token)

    try:
        if "/" not in repo_id:
            repo_id = f"{api.whoami()['name']}/{repo_id}"
        api.create_repo(repo_id, repo_type="model", private=private, exist_ok=True)
        results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
        with tempfile.TemporaryDirectory(prefix="hf_recogs-push-") as staging:
            # The upload is staged apart, so the local folder is never modified: the card is re-rendered there
            # (its usage snippet names the final repository) and the files are hard links where possible.
            _stage(folder, Path(staging), results, repo_id)
            info = api.upload_folder(
                folder_path=staging,
                repo_id=repo_id,
                repo_type="model",
                commit_message=commit_message
                or f"Upload {results.get('arch')} trained on {results.get('dataset')}",
                ignore_patterns=IGNORE_PATTERNS,
            )
    except HubPushError:
        raise
    except Exception as exc:  # network, HTTP and client errors become one clear line
        raise HubPushError(push_error_line(exc, endpoint, repo_id, "run `hf auth login` or set HF_TOKEN",
                                           f"(local output in {folder} is intact)")) from exc
    return str(getattr(info, "commit_url", None) or info)


def _stage(folder: Path, staging: Path, results: dict, repo_id: str) -> None:
    def link_or_copy(src: str, dst: str) -> None:
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)

    shutil.copytree(folder, staging, dirs_exist_ok=True, copy_function=link_or_copy,
                    ignore=shutil.ignore_patterns("checkpoint-*", "runs", ".*"))
    card = staging / "README.md"
    card.unlink(missing_ok=True)  # a hard link to the local card: replace, never write through it
    render_model_card(results, repo_id=repo_id, example=example_input(folder)).save(str(card))


def push_error_line(exc: Exception, endpoint: str, what: str, token_fix: str, tail: str = "") -> str:
    """One line for a failed Hub upload (models here, datasets in ``dataset_export``): an unreachable endpoint, a
    rejected token (401), no write access (403), or the first line of anything else. ``what`` names what was
    pushed, ``token_fix`` how to give a token, ``tail`` what the user should know about local files."""
    from huggingface_hub.errors import HfHubHTTPError

    tail = f" {tail}" if tail else ""
    names = {type(e).__name__ for e in _chain(exc)}
    if not isinstance(exc, HfHubHTTPError) and (
        any(isinstance(e, (ConnectionError, TimeoutError)) for e in _chain(exc))
        or names & {"ConnectError", "ConnectTimeout", "ReadTimeout", "TimeoutException", "NetworkError",
                    "TransportError", "gaierror"}
    ):
        return f"cannot reach the Hub at {endpoint}; check the network or the endpoint (HF_ENDPOINT){tail}"
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if status == 401:
        return f"the Hub at {endpoint} rejected the token (401); {token_fix}{tail}"
    if status == 403:
        return f"no write access to {what} at {endpoint} (403); check the repo id and the token's scope{tail}"
    detail = f"HTTP {status}: {_first_line(exc)}" if status else f"{type(exc).__name__}: {_first_line(exc)}"
    return f"push of {what} to {endpoint} failed: {detail}{tail}"


def _chain(exc: BaseException):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def main(argv=None, prog: str = "python -m hf_recogs.publish.model_push") -> int:
    """``hf-recogs push SEED_DIR USER/REPO [--private] [--endpoint URL]``: upload one trained seed folder with
    our model card."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog=prog, description=main.__doc__)
    parser.add_argument("output_dir", metavar="SEED_DIR", help="a trained seed folder, e.g. outputs/<run>/seed_42")
    parser.add_argument("repo_id", metavar="USER/REPO", help="the model repository (created if missing)")
    parser.add_argument("--private", action="store_true", help="create the repository as private")
    parser.add_argument("--endpoint", default=None, help="Hub endpoint (default: HF_ENDPOINT or huggingface.co)")
    args = parser.parse_args(argv)
    try:
        print(push(args.output_dir, args.repo_id, endpoint=args.endpoint, private=args.private))
    except HubPushError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
