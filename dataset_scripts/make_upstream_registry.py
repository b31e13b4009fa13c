"""Regenerate ``hf_recogs/upstream_files.tsv`` from a mirror's ``UPSTREAM_BLOBS.tsv`` and ``MANIFEST.tsv``.

The registry pins every upstream file we may read by repository, commit, path and checksums (git blob SHA-1
and/or SHA-256 of the content). It holds checksums only, never upstream bytes.

    python dataset_scripts/make_upstream_registry.py ../shared/mirror
"""

import csv
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "hf_recogs" / "upstream_files.tsv"


def main(mirror: str) -> None:
    mirror_dir = Path(mirror)
    rows: dict[tuple[str, str, str], dict] = {}
    with open(mirror_dir / "UPSTREAM_BLOBS.tsv", newline="") as handle:
        for rec in csv.DictReader(handle, delimiter="\t"):
            owner, repo, commit = rec["owner/repo/commit"].split("/")
            key = (f"{owner}/{repo}", commit, rec["path"])
            size = rec["bytes(- when the file is not in the offline mirror snapshot)"]
            rows[key] = {"git_blob": rec["git_blob_sha1"], "sha256": "-", "bytes": size}
    with open(mirror_dir / "MANIFEST.tsv", newline="") as handle:
        for rec in csv.DictReader(handle, delimiter="\t"):
            owner, repo, commit, path = rec["path"].split("/", 3)
            if rec["stored_gzipped"] == "yes":
                path = path.removesuffix(".gz")
            key = (f"{owner}/{repo}", commit, path)
            row = rows.setdefault(key, {"git_blob": "-", "sha256": "-", "bytes": "-"})
            row["sha256"] = rec["sha256_of_content"]
            row["bytes"] = rec["bytes"]
    with open(OUT, "w", newline="") as handle:
        handle.write("repo\tcommit\tpath\tgit_blob_sha1\tsha256\tbytes\n")
        for (repo, commit, path), row in sorted(rows.items()):
            handle.write(f"{repo}\t{commit}\t{path}\t{row['git_blob']}\t{row['sha256']}\t{row['bytes']}\n")
    print(f"wrote {len(rows)} rows to {OUT}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/mirror")
