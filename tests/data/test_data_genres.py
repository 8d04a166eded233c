"""The genre mapping: every release label maps to a Table 4 genre; unknown labels warn once."""

from __future__ import annotations

import warnings

import pytest

from howtobench.data import genres as genres_mod
from howtobench.data.genres import (
    GENRES,
    LABELS,
    TABLE4_GENRES,
    UnknownGenreWarning,
    detail_genre_for,
    genre_for,
    is_known_label,
)

COMPLETION = {"议论文", "散文", "文章", "纪实", "小说", "诗歌"}
GUIDE = COMPLETION | {
    "公文", "信件类写作", "方案", "演讲稿", "规章制度", "合同类写作", "通知", "文秘知识", "报告类写作", "总结类写作"
}  # fmt: skip
OPEN = GUIDE - {"文秘知识"} | {"实习报告", "工作报告", "申请类写作", "介绍说明", "教案"}
RELEASE_LABELS = COMPLETION | GUIDE | OPEN


def test_label_counts_match_the_release() -> None:
    assert (len(COMPLETION), len(GUIDE), len(OPEN), len(RELEASE_LABELS)) == (6, 16, 20, 21)


@pytest.mark.parametrize("label", sorted(RELEASE_LABELS))
def test_every_release_label_maps_without_warning(label: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        genre = genre_for(label)
    assert genre in TABLE4_GENRES
    assert is_known_label(label)
    assert GENRES[detail_genre_for(label)].reported_as == genre


def test_table4_rows_are_the_twelve_genres() -> None:
    assert set(TABLE4_GENRES) == {
        "argumentative", "comment", "poem", "prose", "fiction", "letters",
        "others", "speech", "report", "contract", "plan", "regulation",
    }  # fmt: skip
    assert {"official", "summary", "delivery", "application", "documentary"} <= set(GENRES)


def test_chosen_mappings() -> None:
    expected = {
        "议论文": "argumentative", "文章": "comment", "诗歌": "poem", "散文": "prose", "小说": "fiction",
        "纪实": "prose", "信件类写作": "letters", "演讲稿": "speech", "报告类写作": "report", "实习报告": "report",
        "工作报告": "report", "合同类写作": "contract", "方案": "plan", "教案": "plan", "规章制度": "regulation",
        "公文": "others", "通知": "others", "文秘知识": "others", "总结类写作": "others", "申请类写作": "others",
        "介绍说明": "others",
    }  # fmt: skip
    assert {label: genre_for(label) for label in expected} == expected
    assert set(LABELS) == RELEASE_LABELS
    assert detail_genre_for("纪实") == "documentary"
    assert detail_genre_for("公文") == "official"


def test_every_mapping_has_a_reason_and_labels() -> None:
    assert all(m.why for m in LABELS.values())
    assert all(g.zh and g.en for g in GENRES.values())
    assert GENRES["documentary"].zh == "纪实"
    assert GENRES["comment"].zh == "文章"


def test_english_ids_and_chinese_names_are_accepted() -> None:
    assert genre_for("Fiction") == "fiction"
    assert genre_for("official") == "others"
    assert genre_for("小说") == "fiction"


def test_unknown_label_maps_to_others_and_warns_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(genres_mod, "_warned", set())
    with pytest.warns(UnknownGenreWarning, match="童话"):
        assert genre_for("童话") == "others"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert genre_for("童话") == "others"
        assert genre_for("科幻", warn=False) == "others"
    assert not is_known_label("童话")
