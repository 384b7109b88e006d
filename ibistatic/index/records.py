"""Pure conversions between the model and the index's JSON records, and the shard hash.

Shards are named by ``ibistatic.index.sharding``.
"""

from __future__ import annotations

from typing import Any

from ..core.identifiers import parse_ibi, parse_repository_name
from ..core.model import ArchiveInfo, Item
from ..core.relations import compositions, parse_relation, relation_texts
from ..errors import IbiSyntaxError
from .sharding import FORMAT, VERSION, fnv1a, shard_name

__all__ = [
    "FORMAT",
    "VERSION",
    "fnv1a",
    "shard_name",
    "item_record",
    "item_from_record",
    "archive_record",
    "archive_from_record",
]


def item_record(item: Item) -> dict[str, Any]:
    """An Item as JSON; keys with their default value are left out to keep shards small."""
    record: dict[str, Any] = {
        "archive": item.archive,
        "repository": item.repository.text,
        "state": item.state,
        "timestamp": item.timestamp,
    }
    optional = {
        "ibip": item.ibip.text if item.ibip else None,
        "content-type": item.content_type if item.content_type != "Data" else None,
        "target": item.target,
        "language": item.language,
        "translations": [[tag, ibi.text] for tag, ibi in item.translations] or None,
        "next-edition": item.next_edition.text if item.next_edition else None,
        "metadata": item.metadata.text if item.metadata else None,
        "formats": [list(pair) for pair in item.formats] or None,
        "dublin-core": [[key, list(values)] for key, values in item.dublin_core] or None,
        "transferable": False if not item.transferable else None,
        "files": list(item.files) or None,
    }
    record.update({key: value for key, value in optional.items() if value is not None})
    return record


def item_from_record(record: dict[str, Any]) -> Item:
    get = record.get
    return Item(
        archive=record["archive"],
        repository=parse_repository_name(record["repository"]),
        state=record["state"],
        timestamp=record["timestamp"],
        ibip=parse_ibi(get("ibip")) if get("ibip") else None,
        content_type=get("content-type", "Data"),
        target=get("target"),
        language=get("language"),
        translations=tuple((tag, parse_ibi(text)) for tag, text in get("translations", ())),
        next_edition=parse_ibi(get("next-edition")) if get("next-edition") else None,
        metadata=parse_ibi(get("metadata")) if get("metadata") else None,
        formats=tuple(tuple(pair) for pair in get("formats", ())),
        dublin_core=tuple((key, tuple(values)) for key, values in get("dublin-core", ())),
        transferable=get("transferable", True),
        files=tuple(get("files", ())),
    )


def archive_record(info: ArchiveInfo, relations) -> dict[str, Any]:
    """archive.yaml as JSON, with the relation set the Archive answers (declared or default)."""
    return {
        "name": info.name,
        "address": info.address,
        "service-ibi": info.service_ibi.text,
        "service-ibip": info.service_ibip.text if info.service_ibip else None,
        "platform-software-ibi": info.platform_ibi.text if info.platform_ibi else None,
        "file-url": info.file_url,
        "file-list-url": info.file_list_url,
        "relations-declared": info.relations is not None,
        "relations": relation_texts(relations),
        "pair-list-charset": info.pair_list_charset,
    }


def _default_set(texts: list[str]) -> tuple | None:
    """The default relation set (every relation of the grammar over the Archive's
    languages, core.properties) that `texts` spell, made again from its languages
    rather than parsed text by text: it has as many relations as the square of the
    languages, and a cold lookup reads it whole.  None when `texts` are not that set."""
    head = ".translation("
    languages = [
        text[len(head) : -1] for text in texts if text.startswith(head) and text.count(".") == 1
    ]
    try:
        made = compositions(languages)
    except IbiSyntaxError:
        return None
    return tuple(made) if relation_texts(made) == texts else None


def archive_from_record(record: dict[str, Any]) -> tuple[ArchiveInfo, tuple]:
    texts = record["relations"]
    relations = None if record.get("relations-declared") else _default_set(texts)
    if relations is None:
        relations = tuple(parse_relation(text) for text in texts)
    info = ArchiveInfo(
        name=record["name"],
        address=record["address"],
        service_ibi=parse_repository_name(record["service-ibi"]),
        service_ibip=parse_ibi(record["service-ibip"]) if record.get("service-ibip") else None,
        platform_ibi=parse_ibi(record["platform-software-ibi"])
        if record.get("platform-software-ibi")
        else None,
        file_url=record["file-url"],
        file_list_url=record["file-list-url"],
        relations=relations if record.get("relations-declared") else None,
        pair_list_charset=record.get("pair-list-charset", "utf-8"),
    )
    return info, relations
