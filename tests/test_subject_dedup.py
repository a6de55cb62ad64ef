"""One fact with or without its subject ("Is allergic to peanuts." as ChatGPT writes it, "The owner
is allergic to peanuts." as the agent does) is one fact, on both memories; another subject, or
another word, is another fact."""

import pytest

from memories.writes.dedup import bare, same_but_subject


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


def add(api, text: str, **kw) -> dict:
    r = api.post("/facts", json={"text": text, **kw})
    assert r.status_code in (200, 201), r.text
    return r.json()


def test_a_fact_without_the_owner_as_its_subject_is_the_fact_with_it(api):
    first = add(api, "The owner is allergic to peanuts.")
    again = add(api, "Is allergic to peanuts.")
    assert again["created"] is False and again["id"] == first["id"]
    assert again["duplicate"]["match"] == "near" and 0.6 <= again["duplicate"]["score"] < 0.97
    assert add(api, "User's dog is called Rex")["created"] is True
    assert add(api, "Dog is called Rex.")["id"] == add(api, "The owner's dog is called Rex.")["id"]


def test_an_import_of_a_subject_less_list_merges_into_the_agents_facts(api):
    first = add(api, "The user prefers concise answers.")
    r = api.post("/facts/batch", json={"facts": [{"text": "Prefers concise answers."}, {"text": "Prefers metric units."},
                                                 {"text": "The owner prefers metric units."}]})
    assert r.status_code == 200, r.text
    concise, metric, metric_again = r.json()["results"]
    assert concise["created"] is False and concise["id"] == first["id"]
    assert metric["created"] is True and metric_again["created"] is False and metric_again["id"] == metric["id"]


def test_a_replaced_fact_said_without_its_subject_does_not_come_back_as_current(api):
    """An import of "Lives in Utrecht." after the agent's "moved to Porto" replaced "The owner lives
    in Utrecht.": answered with the replaced fact, which stays replaced, as `replaced`."""
    utrecht = add(api, "The owner lives in Utrecht.")["id"]
    porto = add(api, "The owner and family moved to Porto.", supersedes=[utrecht])["id"]
    r = api.post("/facts/batch", json={"facts": [{"text": "Lives in Utrecht"}]})
    [again] = r.json()["results"]
    assert again["created"] is False and again["id"] == utrecht and again["duplicate"]["match"] == "replaced"
    assert api.get(f"/facts/{utrecht}").json()["superseded_by"] == porto


def test_another_subject_or_another_word_is_another_fact(api):
    add(api, "Is allergic to shellfish.")
    for text in ("Priya is allergic to shellfish.", "The owner is allergic to cats.", "Is not allergic to shellfish anymore."):
        assert add(api, text)["created"] is True, text


def test_bare_takes_off_an_opening_owner_subject_only():
    assert bare("  The Owner's car is a Skoda. ") == "car is a skoda"
    assert bare("User is vegan") == bare("is vegan.") == "is vegan"
    assert bare("The owners are away.") == "the owners are away"  # a plural is not the owner
    assert same_but_subject("Lives in Leeds.", "The owner lives in Leeds.")
    assert not same_but_subject("Lives in Leeds.", "Priya lives in Leeds.")
    assert not same_but_subject("The owner.", "Owner") and not same_but_subject("", "")
