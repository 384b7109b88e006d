"""The words of the site's pages, in English and Portuguese (docs/site.md, "Languages").

A page speaks the language of its item when the interface has it (``pt-BR`` -> ``pt``),
else the site's ``language`` (ibistatic.yaml).  Everything a reader sees goes through
:data:`TEXTS` (:data:`ALERTS`, :data:`STEPS`), the scripts' words too
(:mod:`.script_words` picks them); Dublin Core elements and language codes get human
names from :mod:`.names` (:func:`element_label`, :func:`language_name`).  Pure: no file
is read.
"""

from __future__ import annotations

from ..config import INTERFACE_LANGUAGES
from ..core.facts import LASTEDITION, METADATA, STEP_NOUNS, TRANSLATION
from .names import element_label, language_name

__all__ = [
    "LANGUAGES",
    "TEXTS",
    "ALERTS",
    "STEPS",
    "page_language",
    "element_label",
    "language_name",
    "state_name",
]

#: the interface languages, the first the default of a site that names none
LANGUAGES = INTERFACE_LANGUAGES

TEXTS = {
    "en": {
        "site_home": "Persistent links of this site",
        "record": "Record",
        "record_of": "Record of",
        "record_link": "Everything about this item (its record)",
        "persistent_url": "Persistent URL",
        "persistent_urls": "Persistent URLs",
        "asked_for": "Asked for",
        "tried": "Tried",
        "archive": "Archive",
        "archives": "Archives",
        "state": "State",
        "updated": "Last updated",
        "deleted_on": "Deleted on",
        "reason": "Reason",
        "identifiers": "Identifiers",
        "repository_name": "Repository name",
        "ibip": "IBIp",
        "content_type": "Content type",
        "language": "Language",
        "description": "Description (Dublin Core)",
        "no_description": "The Archive gives no Dublin Core description of this item.",
        "editions": "Editions",
        "next_edition": "Next edition",
        "translations": "Translations",
        "metadata_item": "Metadata",
        "metadata_page": "Metadata (Dublin Core)",
        "oai_dc_record": "OAI Dublin Core record (XML)",
        "cite_files": "To cite it",
        "files": "Files",
        "file_list": "List of files",
        "open_item": "Open the item",
        "held_by": "Where it is kept",
        "copy_in": "Copy in",
        "not_held": "not held by any Archive of this site",
        "tombstone": "This item was deleted",
        "tombstone_text": "The item was removed from its Archive. Its persistent identifier "
        "stays reserved for it and is never given to another item.",
        "file": "File",
        "size": "Size",
        "type": "Type",
        "checksum": "SHA-256 checksum",
        "default_file": "default file",
        "files_of": "Files of",
        "files_intro": "The files of the item, with their sizes, types and SHA-256 checksums, "
        "as kept in the Archive",
        "metadata_of": "Metadata of",
        "metadata_intro": "The description (Dublin Core) of the item",
        "also_as": "Also as an",
        "element": "Element",
        "value": "Value",
        "contact": "Contact",
        "policy": "Persistence policy",
        "search": "Search the items",
        "search_button": "Search",
        "bytes": "bytes",
        "unknown": "unknown",
        "Original": "Original",
        "Copy": "Copy",
        "Deleted": "Deleted",
        "Data": "Data",
        "Metadata": "Metadata",
        "landing_title": "Persistent links at",
        "landing_intro": "This site resolves the IBIs (Internet Based Identifiers) of {items} "
        "items held in {archives} Archives: {keys} IBIs, {urls} persistent URLs answered in "
        "advance, and every other form (other modifiers, file paths, ?ibiurl. queries) in "
        "your browser.",
        "address": "Address",
        "catalog": "Catalog",
        "every_item": "Every item, without JavaScript",
        "every_page": "Every page about an item (sitemap)",
        "every_url": "Every persistent URL (sitemap)",
        "json_index": "The JSON index",
        "example": "A persistent URL is this site's address followed by an IBI and, "
        "optionally, a modifier; this one is the OAI Dublin Core metadata of an item:",
        # 404.html and the static search (their scripts' words: browser_words, search_words)
        "resolving": "Resolving a persistent URL",
        "noscript_resolve": "This site resolves persistent URLs (IBIs with modifiers, file "
        "paths and ?ibiurl. queries) with JavaScript, which is off.",
        "browse": "Browse",
        "the_list": "the list of every item",
        "all_links": "All persistent links of this site",
        "search_title": "Search",
        "search_heading": "Search the items of",
        "search_label": "Titles, creators, subjects, years or IBIs",
        "more_results": "More results",
        "search_noscript": "Searching needs JavaScript, which is off.",
        "list_of_all": "the list of all {documents} items",
        "list_title": "Every item, page {number} of {count}",
        "list_intro": "Items {first} to {last} of {documents}, oldest first.",
        "list_pages": "Pages of the list",
        "list_pages_end": "Pages of the list, at its end",
        "previous_page": "Previous page",
        "next_page": "Next page",
        "title": "Title",
        "year": "Year",
        "deleted": "(deleted)",
        "searching": "Searching…",
        "matches_one": "{n} item matches “{q}”.",
        "matches": "{n} items match “{q}”.",
        "no_match": "No item matches “{q}”.",
        "search_failed": "The search failed:",
        "ibi": "IBI",
        "form": "Form",
        "ibi_repository": "repository name",
        "verb": "Verb",
        "required_status": "Required status",
        "request": "Request",
        "where": "Where",
        "expected": "Expected",
        "hint": "Hint",
    },
    "pt": {
        "site_home": "Links persistentes deste site",
        "record": "Registro",
        "record_of": "Registro de",
        "record_link": "Tudo sobre este item (seu registro)",
        "persistent_url": "URL persistente",
        "persistent_urls": "URLs persistentes",
        "asked_for": "Pedido",
        "tried": "Tentado",
        "archive": "Arquivo",
        "archives": "Arquivos",
        "state": "Estado",
        "updated": "Última atualização",
        "deleted_on": "Removido em",
        "reason": "Motivo",
        "identifiers": "Identificadores",
        "repository_name": "Nome do repositório",
        "ibip": "IBIp",
        "content_type": "Tipo de conteúdo",
        "language": "Idioma",
        "description": "Descrição (Dublin Core)",
        "no_description": "O Arquivo não dá uma descrição Dublin Core deste item.",
        "editions": "Edições",
        "next_edition": "Próxima edição",
        "translations": "Traduções",
        "metadata_item": "Metadados",
        "metadata_page": "Metadados (Dublin Core)",
        "oai_dc_record": "Registro OAI Dublin Core (XML)",
        "cite_files": "Para citar",
        "files": "Arquivos do item",
        "file_list": "Lista de arquivos",
        "open_item": "Abrir o item",
        "held_by": "Onde é mantido",
        "copy_in": "Cópia em",
        "not_held": "não mantido por nenhum Arquivo deste site",
        "tombstone": "Este item foi removido",
        "tombstone_text": "O item foi removido do seu Arquivo. Seu identificador persistente "
        "continua reservado a ele e nunca é dado a outro item.",
        "file": "Arquivo",
        "size": "Tamanho",
        "type": "Tipo",
        "checksum": "Soma de verificação SHA-256",
        "default_file": "arquivo padrão",
        "files_of": "Arquivos de",
        "files_intro": "Os arquivos do item, com seus tamanhos, tipos e somas de verificação "
        "SHA-256, como mantidos no Arquivo",
        "metadata_of": "Metadados de",
        "metadata_intro": "A descrição (Dublin Core) do item",
        "also_as": "Também como",
        "element": "Elemento",
        "value": "Valor",
        "contact": "Contato",
        "policy": "Política de persistência",
        "search": "Buscar nos itens",
        "search_button": "Buscar",
        "bytes": "bytes",
        "unknown": "desconhecido",
        "Original": "Original",
        "Copy": "Cópia",
        "Deleted": "Removido",
        "Data": "Dados",
        "Metadata": "Metadados",
        "landing_title": "Links persistentes em",
        "landing_intro": "Este site resolve os IBIs (Internet Based Identifiers) de {items} "
        "itens mantidos em {archives} Arquivos: {keys} IBIs, {urls} URLs persistentes "
        "respondidas de antemão, e qualquer outra forma (outros modificadores, caminhos de arquivo, "
        "consultas ?ibiurl.) no seu navegador.",
        "address": "Endereço",
        "catalog": "Catálogo",
        "every_item": "Todos os itens, sem JavaScript",
        "every_page": "Todas as páginas sobre itens (sitemap)",
        "every_url": "Todas as URLs persistentes (sitemap)",
        "json_index": "O índice JSON",
        "example": "Uma URL persistente é o endereço deste site seguido de um IBI e, "
        "opcionalmente, de um modificador; esta é a descrição OAI Dublin Core de um item:",
        "resolving": "Resolvendo uma URL persistente",
        "noscript_resolve": "Este site resolve URLs persistentes (IBIs com modificadores, "
        "caminhos de arquivo e consultas ?ibiurl.) com JavaScript, que está desativado.",
        "browse": "Veja",
        "the_list": "a lista de todos os itens",
        "all_links": "Todos os links persistentes deste site",
        "search_title": "Busca",
        "search_heading": "Buscar nos itens de",
        "search_label": "Títulos, autores, assuntos, anos ou IBIs",
        "more_results": "Mais resultados",
        "search_noscript": "A busca precisa de JavaScript, que está desativado.",
        "list_of_all": "a lista de todos os {documents} itens",
        "list_title": "Todos os itens, página {number} de {count}",
        "list_intro": "Itens {first} a {last} de {documents}, dos mais antigos aos mais novos.",
        "list_pages": "Páginas da lista",
        "list_pages_end": "Páginas da lista, ao final",
        "previous_page": "Página anterior",
        "next_page": "Próxima página",
        "title": "Título",
        "year": "Ano",
        "deleted": "(removido)",
        "searching": "Buscando…",
        "matches_one": "{n} item corresponde a “{q}”.",
        "matches": "{n} itens correspondem a “{q}”.",
        "no_match": "Nenhum item corresponde a “{q}”.",
        "search_failed": "A busca falhou:",
        "ibi": "IBI",
        "form": "Forma",
        "ibi_repository": "nome do repositório",
        "verb": "Verbo",
        "required_status": "Estado exigido",
        "request": "Requisição",
        "where": "Onde",
        "expected": "Esperado",
        "hint": "Dica",
    },
}

#: alert -> language -> (title, plain explanation) of the alert pages
ALERTS = {
    "not-found": {
        "en": ("Not found", "This site knows no item with this identifier. Check the address."),
        "pt": (
            "Não encontrado",
            "Este site não conhece nenhum item com este identificador. Confira o endereço.",
        ),
    },
    "deleted": {
        "en": (
            "Deleted item",
            "The item was removed. Its identifier is never given to another item; its record "
            "says when it was removed.",
        ),
        "pt": (
            "Item removido",
            "O item foi removido. Seu identificador nunca é dado a outro item; seu registro "
            "diz quando foi removido.",
        ),
    },
    "conflict": {
        "en": (
            "More than one original",
            "More than one Archive says it keeps the original of this item, so this site "
            "cannot tell which one to send you to. The copies it knows are listed below: "
            "they may well be the same document.",
        ),
        "pt": (
            "Mais de um original",
            "Mais de um Arquivo diz manter o original deste item, então este site não sabe "
            "para qual enviar você. As cópias conhecidas estão abaixo: podem muito bem ser "
            "o mesmo documento.",
        ),
    },
    "no-original": {
        "en": (
            "No original",
            "You asked for the original of this item, and this site knows only copies of it. "
            "The copies are listed below.",
        ),
        "pt": (
            "Sem original",
            "Você pediu o original deste item, e este site conhece apenas cópias dele. As "
            "cópias estão abaixo.",
        ),
    },
    "unavailable": {
        "en": (
            "Not available",
            "The item exists, but it has no such edition, translation or metadata. The item "
            "itself is linked below.",
        ),
        "pt": (
            "Não disponível",
            "O item existe, mas não tem essa edição, tradução ou metadados. O próprio item "
            "está abaixo.",
        ),
    },
    "loop": {
        "en": (
            "Endless chain",
            "Following the editions or translations of this item comes back where it "
            "started, so there is no last one to send you to.",
        ),
        "pt": (
            "Cadeia sem fim",
            "Seguir as edições ou traduções deste item volta ao ponto de partida, então não "
            "há uma última para onde enviar você.",
        ),
    },
    # the in-browser resolver's own two failures (404.html; browser_words)
    "bad-url": {
        "en": (
            "Not a persistent URL",
            "The address does not follow the grammar of persistent URLs. Check it: the details "
            "below show where it goes wrong.",
        ),
        "pt": (
            "Não é uma URL persistente",
            "O endereço não segue a gramática das URLs persistentes. Confira-o: os detalhes "
            "abaixo mostram onde está o erro.",
        ),
    },
    "error": {
        "en": (
            "Resolution failed",
            "This site's index could not be read, so the address could not be resolved. Try "
            "again later.",
        ),
        "pt": (
            "A resolução falhou",
            "O índice deste site não pôde ser lido, então o endereço não pôde ser resolvido. "
            "Tente de novo mais tarde.",
        ),
    },
}

#: what a step of a modifier returns, and how a step joins the one it applies to
#: ("metadados da tradução"); English takes the nouns of the standard (core/facts.py)
STEPS = {
    "en": {
        "itself": "the item itself",
        "nouns": STEP_NOUNS,
        "of": dict.fromkeys(STEP_NOUNS, " of the "),
    },
    "pt": {
        "itself": "o próprio item",
        "nouns": {LASTEDITION: "última edição", TRANSLATION: "tradução", METADATA: "metadados"},
        "of": {LASTEDITION: " da ", TRANSLATION: " da ", METADATA: " dos "},
    },
}


def describe_steps(relation, ui: str) -> str:
    """What a relation (core.relations: its steps, innermost first) returns, in the
    interface language `ui`: ``translation (en) dos metadados da última edição``; the
    same composition as resolve.js's describeSteps, from the same words."""
    said = STEPS[ui]
    if not relation:
        return said["itself"]
    parts = []
    for n, step in enumerate(reversed(relation)):
        noun = said["nouns"][step.kind] + (f" ({step.param})" if step.param else "")
        parts.append(noun if n == 0 else said["of"][step.kind] + noun)
    return "".join(parts)


def page_language(item_language: str | None, default: str) -> str:
    """The interface language of a page about an item in `item_language` (a tag such as
    ``pt-BR``): its primary language when the interface has it, else `default`."""
    if item_language:
        primary = item_language.split("-", 1)[0].lower()
        if primary in LANGUAGES:
            return primary
    return default


def state_name(state: str, ui: str) -> str:
    return TEXTS[ui].get(state, state)
