"""Writing small Archives in tests: archive.yaml, item.yaml and real doc/ files."""

from __future__ import annotations

from pathlib import Path

import yaml


def write_archive(
    root: Path, address: str, service: str, *, service_item: bool = True, **extra
) -> Path:
    """archive.yaml, and (`service_item`) the item of the Archive's service, which an
    Archive holds as a non-transferable original (else the build warns)."""
    root.mkdir(parents=True, exist_ok=True)
    descriptor = {"address": address, "service-ibi": service, **extra}
    (root / "archive.yaml").write_text(
        yaml.safe_dump(descriptor, allow_unicode=True), encoding="utf-8"
    )
    if service_item:
        write_service_item(root, service)
    return root


def write_service_item(root: Path, service: str) -> Path:
    return write_item(
        root,
        service,
        {"index.html": "<!DOCTYPE html><title>Archive service</title>\n"},
        state="Original",
        transferable=False,
    )


def write_item(
    root: Path, repository: str, files: dict[str, str] | None = None, **descriptor
) -> Path:
    """A uniform repository at `repository` with item.yaml from `descriptor` (keys with
    '_' spelled '-') and the given doc/ files (name -> text)."""
    directory = root.joinpath(*repository.split("/"))
    (directory / "doc").mkdir(parents=True, exist_ok=True)
    data = {key.replace("_", "-"): value for key, value in descriptor.items()}
    data.setdefault("timestamp", "2020-01-01T00:00:00Z")
    (directory / "item.yaml").write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    for name, text in (files or {"document.txt": f"The document {repository}.\n"}).items():
        path = directory / "doc" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return directory
