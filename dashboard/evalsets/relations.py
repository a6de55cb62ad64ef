"""Generate the templated relation set: family and work facts about 40 invented people.

    python -m dashboard.evalsets.relations > dashboard/evalsets/relations.json

Every person has a job, an employer, a home and a birth year; most have a manager, many a spouse,
a sibling or a best friend. Each relation is written with one of several templates ("X reports to
Y." / "X's manager is Y." / "Y manages X."), so a question's look-alikes are the person's other
facts, other people's facts of the same template, and facts where the person is the object.
Questions use the paraphrases an agent uses ("x boss?", "who is X married to", "what does X do
for a living"). No two facts link the same pair of people and no one has two facts of a relation,
so each question has exactly one fact that answers it.
"""

from __future__ import annotations

import json
import random

# (first name, "f" or "m"); first names are distinct, so a first name alone names one person.
PEOPLE = [
    ("Ainhoa", "f"), ("Birgit", "f"), ("Cosima", "f"), ("Delphine", "f"), ("Esme", "f"), ("Freya", "f"),
    ("Gudrun", "f"), ("Hanne", "f"), ("Ilona", "f"), ("Jorunn", "f"), ("Katja", "f"), ("Liesel", "f"),
    ("Marisol", "f"), ("Nerys", "f"), ("Ottilie", "f"), ("Petra", "f"), ("Quilla", "f"), ("Rania", "f"),
    ("Sigrid", "f"), ("Tamsin", "f"), ("Ulla", "f"),
    ("Anselm", "m"), ("Bastian", "m"), ("Cyrus", "m"), ("Dario", "m"), ("Eamon", "m"), ("Florin", "m"),
    ("Gideon", "m"), ("Henrik", "m"), ("Ivo", "m"), ("Joaquin", "m"), ("Kasper", "m"), ("Lorcan", "m"),
    ("Matthias", "m"), ("Nils", "m"), ("Orrin", "m"), ("Pascal", "m"), ("Ruben", "m"), ("Stellan", "m"),
    ("Tobias", "m"),
]
SURNAMES = ("Arrieta Brandvold Castellan Dahlberg Eskildsen Falkner Gallardo Hartwig Iversen Jaramillo "
            "Kowalczyk Lindqvist Moretti Nakashima Oyelaran Pereira Quintana Rasmussen Salonen Teixeira "
            "Uhlmann Varga Wozniak Zeller").split()
CITIES = "Tampere Bilbao Graz Aarhus Lyon Bergen Gdansk Trieste Leeds Brno".split()
COMPANIES = ["Corvid Analytics", "Halcyon Freight", "Marrow & Pike", "Tidewater Bio", "Nordlicht Energie",
             "Quarry Lane Studios"]
JOBS = ["copy editor", "data analyst", "payroll clerk", "web designer", "quantity surveyor", "lab technician",
        "logistics planner", "actuary", "welder", "cartographer", "sommelier", "paralegal", "pharmacist",
        "botanist", "electrician", "toolmaker", "translator", "machinist", "archivist", "acoustician",
        "glazier", "brewer", "midwife", "optician"]

FACT_TEMPLATES = {
    "manager": ["{a} reports to {b}.", "{a}'s manager is {b}.", "{b} manages {a}."],
    "job": ["{a} works as {art} {job}.", "{a} is {art} {job} by trade.", "{a}'s profession is {job}."],
    "employer": ["{a} works at {co}.", "{a} is employed by {co}.", "{a}'s employer is {co}."],
    "city": ["{a} lives in {city}.", "{a}'s home is in {city}.", "{a} is based in {city}."],
    "born": ["{a} was born in {year}.", "{a}'s year of birth is {year}."],
    "spouse": ["{a} is married to {b}.", "{a}'s {bkin} is {b}."],
    "sibling": ["{a}'s {bkin} is {b}.", "{b} is {a}'s {bkin}."],
    "friend": ["{a}'s best friend is {b}.", "{b} is {a}'s best friend."],
}
QUESTION_TEMPLATES = {
    "manager": ["who is {x}'s boss", "who does {x} report to", "{x} manager?", "who is {x}'s supervisor",
                "{x} boss?", "{x}'s line manager"],
    "job": ["what does {x} do for a living", "what is {x}'s occupation", "{x} job?", "what's {x}'s profession",
            "{x} line of work"],
    "employer": ["which company does {x} work for", "{x}'s employer", "who employs {x}", "{x} company?",
                 "what firm is {x} at"],
    "city": ["where does {x} live", "{x}'s hometown", "which city does {x} live in", "{x} city?",
             "where is {x} based"],
    "born": ["when was {x} born", "{x} birth year", "how old is {x}", "what year was {x} born"],
    "spouse": ["who is {x} married to", "who is {x}'s {ykin}", "{x} spouse?", "{x}'s partner", "{x} {ykin}?"],
    "sibling": ["who is {x}'s {ykin}", "{x} sibling?", "{x}'s {ykin}?"],
    "friend": ["who is {x}'s best friend", "{x} bff?", "{x}'s closest friend"],
}
QUOTA = {"manager": 16, "spouse": 12, "job": 12, "city": 12, "employer": 12, "born": 8, "sibling": 8, "friend": 6}
SPOUSES, SIBLINGS, FRIENDS = 14, 16, 26
KIN = {"spouse": {"f": "wife", "m": "husband"}, "sibling": {"f": "sister", "m": "brother"}}


def generate(seed: int = 909) -> dict:
    rng = random.Random(seed)
    gender = dict(PEOPLE)
    firsts = [p for p, _ in PEOPLE]
    linked: set[frozenset] = set()  # pairs of people that already share a fact

    def free_pairs(count: int, pool: list[str], disjoint: bool) -> list[tuple[str, str]]:
        out, used = [], set()
        while len(out) < count:
            a, b = rng.sample(pool, 2)
            if frozenset((a, b)) in linked or (disjoint and (a in used or b in used)):
                continue
            out.append((a, b))
            linked.add(frozenset((a, b)))
            used.update((a, b))
        return out

    # Work: each company a small tree; everyone but its head reports to someone earlier in it.
    order = firsts[:]
    rng.shuffle(order)
    employer, manager = {}, {}
    for i, co in enumerate(COMPANIES):
        staff = order[i::len(COMPANIES)]
        for j, p in enumerate(staff):
            employer[p] = co
            if j:
                manager[p] = rng.choice(staff[:j])
                linked.add(frozenset((p, manager[p])))
    job = {p: rng.choice(JOBS) for p in firsts}
    city = {p: rng.choice(CITIES) for p in firsts}
    born = {p: rng.randint(1958, 2001) for p in firsts}
    siblings = free_pairs(SIBLINGS, firsts, disjoint=True)
    spouses = free_pairs(SPOUSES, firsts, disjoint=True)
    friend: dict[str, str] = {}
    while len(friend) < FRIENDS:
        a, b = rng.sample(firsts, 2)
        if a not in friend and frozenset((a, b)) not in linked:
            friend[a] = b
            linked.add(frozenset((a, b)))

    # Siblings share a surname; everyone else has one of their own.
    surnames = SURNAMES[:]
    rng.shuffle(surnames)
    surname = {}
    for a, b in siblings:
        surname[a] = surname[b] = surnames.pop()
    for p in firsts:
        if p not in surname:
            surname[p] = surnames.pop()
    full = {p: f"{p} {surname[p]}" for p in firsts}

    # Facts, one per (relation, subject); `answers` maps (relation, person asked about) to its fact.
    facts: list[str] = []
    answers: dict[tuple[str, str], str] = {}

    def write(rel: str, asked: list[str], **slots) -> None:
        text = rng.choice(FACT_TEMPLATES[rel]).format(**slots)
        facts.append(text)
        for p in asked:
            assert (rel, p) not in answers, (rel, p)
            answers[(rel, p)] = text

    for p in firsts:
        a = full[p]
        write("job", [p], a=a, job=job[p], art="an" if job[p][0] in "aeiouAEIOU" else "a")
        write("employer", [p], a=a, co=employer[p])
        write("city", [p], a=a, city=city[p])
        write("born", [p], a=a, year=born[p])
        if p in manager:
            write("manager", [p], a=a, b=full[manager[p]])
        if p in friend:
            write("friend", [p], a=a, b=full[friend[p]])
    for a, b in spouses:
        write("spouse", [a, b], a=full[a], b=full[b], bkin=KIN["spouse"][gender[b]])
    for a, b in siblings:
        write("sibling", [a, b], a=full[a], b=full[b], bkin=KIN["sibling"][gender[b]])
    assert len(set(facts)) == len(facts)
    rng.shuffle(facts)

    partner = {a: b for a, b in spouses} | {b: a for a, b in spouses}
    sibling = {a: b for a, b in siblings} | {b: a for a, b in siblings}
    other = {"spouse": partner, "sibling": sibling}
    cases = []
    for rel, n in QUOTA.items():
        asked = rng.sample(sorted(p for r, p in answers if r == rel), n)
        for p in asked:
            x = rng.choice([full[p], p, full[p].lower(), p.lower()])
            slots = {"x": x}
            if rel in other:
                slots["ykin"] = KIN[rel][gender[other[rel][p]]]
            question = rng.choice(QUESTION_TEMPLATES[rel]).format(**slots)
            cases.append({"question": question, "expected": [answers[(rel, p)]]})
    rng.shuffle(cases)
    assert len({c["question"] for c in cases}) == len(cases)

    return {
        "name": "relations",
        "description": f"Templated relation set: {len(facts)} family-and-work facts about {len(firsts)} invented "
        f"people (manager, job, employer, home, birth year, spouse, sibling, best friend; several templates "
        f"each) and {len(cases)} questions in agents' paraphrases (boss/supervisor/report to, spouse/wife/"
        f"married to, job/occupation/for a living, hometown, terse lower-case forms), each answered by exactly "
        f"one fact (seed {seed}). Written before the issue-9 ranking change; unseen.",
        "facts": [{"text": t, "type": "fact", "source": "relations"} for t in facts],
        "cases": cases,
    }


if __name__ == "__main__":
    print(json.dumps(generate(), indent=1))
