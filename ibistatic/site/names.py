"""Human names, in English and Portuguese, of Dublin Core elements and of language tags
(docs/site.md, "Languages"); :mod:`.i18n` gives them to the pages.  Pure."""

from __future__ import annotations

from ..config import INTERFACE_LANGUAGES

__all__ = ["element_label", "language_name"]

#: the 15 Dublin Core elements -> (English, Portuguese) labels
_ELEMENTS = {
    "title": ("Title", "Título"),
    "creator": ("Creator", "Autor"),
    "subject": ("Subject", "Assunto"),
    "description": ("Description", "Descrição"),
    "publisher": ("Publisher", "Editora"),
    "contributor": ("Contributor", "Colaborador"),
    "date": ("Date", "Data"),
    "type": ("Type", "Tipo"),
    "format": ("Format", "Formato"),
    "identifier": ("Identifier", "Identificador"),
    "source": ("Source", "Fonte"),
    "language": ("Language", "Idioma"),
    "relation": ("Relation", "Relação"),
    "coverage": ("Coverage", "Cobertura"),
    "rights": ("Rights", "Direitos"),
}

#: ISO 639-1 code -> (English, Portuguese) name, for the languages an Archive most
#: likely holds; another code is shown as it is
_LANGUAGE_NAMES = {
    "pt": ("Portuguese", "Português"),
    "en": ("English", "Inglês"),
    "es": ("Spanish", "Espanhol"),
    "fr": ("French", "Francês"),
    "de": ("German", "Alemão"),
    "it": ("Italian", "Italiano"),
    "nl": ("Dutch", "Holandês"),
    "ru": ("Russian", "Russo"),
    "zh": ("Chinese", "Chinês"),
    "ja": ("Japanese", "Japonês"),
    "ko": ("Korean", "Coreano"),
    "ar": ("Arabic", "Árabe"),
    "hi": ("Hindi", "Hindi"),
    "la": ("Latin", "Latim"),
    "gn": ("Guarani", "Guarani"),
    "tu": ("Tupi", "Tupi"),
    "ca": ("Catalan", "Catalão"),
    "gl": ("Galician", "Galego"),
    "pl": ("Polish", "Polonês"),
    "sv": ("Swedish", "Sueco"),
    "el": ("Greek", "Grego"),
    "he": ("Hebrew", "Hebraico"),
    "tr": ("Turkish", "Turco"),
}

#: ISO 3166-1 country -> (English, Portuguese) name, for the tags the sample uses most
_COUNTRIES = {
    "BR": ("Brazil", "Brasil"),
    "PT": ("Portugal", "Portugal"),
    "US": ("United States", "Estados Unidos"),
    "GB": ("United Kingdom", "Reino Unido"),
    "ES": ("Spain", "Espanha"),
    "FR": ("France", "França"),
    "AO": ("Angola", "Angola"),
    "MZ": ("Mozambique", "Moçambique"),
}


def _in(names: tuple[str, str], ui: str) -> str:
    return names[INTERFACE_LANGUAGES.index(ui)]


def element_label(element: str, ui: str) -> str:
    """The human name of a Dublin Core element (another key is shown as it is)."""
    names = _ELEMENTS.get(element.lower())
    return _in(names, ui) if names else element


def language_name(tag: str, ui: str) -> str:
    """``pt-BR`` -> "Portuguese (Brazil)" / "Português (Brasil)"; an unknown code stays."""
    primary, _, country = tag.partition("-")
    names = _LANGUAGE_NAMES.get(primary.lower())
    if names is None:
        return tag
    name = _in(names, ui)
    if country:
        place = _COUNTRIES.get(country.upper())
        name += f" ({_in(place, ui) if place else country})"
    return name
