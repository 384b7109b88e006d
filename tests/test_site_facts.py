"""ibistatic.site.facts: what the state keeps of each item, kept small (a 1M-item build
holds a million of each)."""

from __future__ import annotations

import pickle

from ibistatic.site import facts
from ibistatic.site.facts import PagePaths


def test_page_paths_give_back_the_paths_they_were_made_of():
    key = "sid.inpe.br/mtc-m19/2013/09.04.12.27.57"
    paths = [
        f"files/{key}/index.html",
        f"record/{key}/index.html",
        f"metadata/{key}/oai_dc/index.html",
        "record/SID.INPE.BR/other/index.html",  # not around the key: kept whole
        f"files/{key}x/index.html",  # the key, but not as a folder
    ]
    kept = PagePaths.of(key, paths)
    assert list(kept) == paths and len(kept) == 5
    assert kept[1] == paths[1] and kept[-1] == paths[-1] and kept[1:3] == paths[1:3]
    assert kept == paths and kept != paths[:-1] and kept == PagePaths.of(key, paths)
    assert list(pickle.loads(pickle.dumps(kept))) == paths
    # the paths around the key keep only what is not the key
    assert all(key not in part for pair in kept.shape[:3] for part in pair)


def test_page_paths_of_alike_repositories_share_one_shape_pickled_or_not():
    one = PagePaths.of("a.b/c/2020/01.02.03.04", ["files/a.b/c/2020/01.02.03.04/index.html"])
    other = PagePaths.of("x.y/z/2021/05.06.07.08", ["files/x.y/z/2021/05.06.07.08/index.html"])
    assert one.shape is other.shape
    again = pickle.loads(pickle.dumps({"one": one, "other": other}))
    assert again["one"].shape is one.shape and again["other"].shape is one.shape
    assert again["other"].key == "x.y/z/2021/05.06.07.08"
    # a path kept whole is one of a kind: not shared, so never kept past its repository
    whole = PagePaths.of("k", ["elsewhere/index.html"])
    assert whole.shape not in facts._SHAPES


def test_a_full_build_keeps_the_facts_tables_instead_of_copying_them():
    """A fold into an empty table takes the build's own (one table at the peak, not
    two); into a table with entries it adds them."""
    fresh = {"b": 2}
    assert facts._joined({}, fresh) is fresh
    table = {"a": 1}
    assert facts._joined(table, fresh) is table and table == {"a": 1, "b": 2}


def test_published_urls_are_packed_and_read_as_they_were():
    """An item's PublishedUrls read back as the tuples they were made of, pickled or
    not, in far less memory than the tuples themselves."""
    import sys

    from ibistatic.targets import PublishedUrl, PublishedUrls

    ibi, url = "sid.inpe.br/mtc-m19/2013/09.04.12.27.57", "http://archive.example/doc/a.pdf"
    urls = [
        PublishedUrl(ibi, "", ibi, url, None),
        PublishedUrl(ibi, "!", ibi, url, None),
        PublishedUrl(ibi, ":", ibi, None, "unavailable"),
        PublishedUrl(
            "8JMKD3MGP7W/3EPGUE5", ":(oai_dc)", "8JMKD3MGP7W/3EPGUE5", None, "unavailable"
        ),
    ]
    packed = PublishedUrls(urls)
    assert list(packed) == urls and packed == urls and len(packed) == 4
    assert packed[2] == urls[2] and packed[-1].path == "8JMKD3MGP7W/3EPGUE5:(oai_dc)"
    again = pickle.loads(pickle.dumps(packed))
    assert again == urls and again != urls[:3] and not (again == ibi)
    first, second, *_ = again
    assert first.url is second.url and first.canonical is first.ibi  # shared once read
    kept = sys.getsizeof(packed) + sys.getsizeof(packed._packed)
    # the tuples, and the strings of this item only (modifiers and alerts are the site's)
    own = {id(s): s for u in urls for s in (u.ibi, u.canonical, u.url) if s is not None}
    as_tuples = sys.getsizeof(tuple(urls)) + sum(map(sys.getsizeof, [*urls, *own.values()]))
    assert kept < as_tuples / 2 and PublishedUrls([]) == []
