"""Generate the second templated relation set: everyday-life facts about 35 invented people.

    python -m dashboard.evalsets.relations2 > dashboard/evalsets/relations2.json

A different generator from relations.py, with other people, relations and templates. Each person
has some of: a dentist, a GP, a car, a pet, a favourite food, an allergy, a phone number and a
department at work. Between the people there are landlords, coaches/mentors, next-door neighbours,
bandmates, mothers and fathers, so most names appear both as the subject of a fact and as the object
of another ("Y is X's landlord." / "Y's mum is Z."). Each relation is written with one of several
templates, and questions use the terse paraphrases an agent uses ("x landlord?", "who does x rent
from", "x's mum?", "who trains x", "x allergic to?"), with the odd typo.

Nobody has two facts of one relation (for the symmetric ones, neighbour and bandmate, nobody is in
two pairs), no two people are linked by more than one fact, and questions only ask in the direction
that has one answer (who is X's landlord, never who rents from Y), so each question has exactly one
fact that answers it.
"""

from __future__ import annotations

import json
import random

# (first name, "f" or "m"); first names are distinct, so a first name alone names one person.
PEOPLE = [
    ("Albertine", "f"), ("Brisa", "f"), ("Clodagh", "f"), ("Dagny", "f"), ("Elowen", "f"), ("Femke", "f"),
    ("Giedre", "f"), ("Honora", "f"), ("Iolanthe", "f"), ("Jessamy", "f"), ("Kerensa", "f"), ("Ludmila", "f"),
    ("Maelle", "f"), ("Oona", "f"), ("Perpetua", "f"), ("Roswitha", "f"), ("Saoirse", "f"), ("Thora", "f"),
    ("Alaric", "m"), ("Bertil", "m"), ("Diarmuid", "m"), ("Evander", "m"), ("Fitzroy", "m"), ("Gaspard", "m"),
    ("Hamish", "m"), ("Ignatius", "m"), ("Jerzy", "m"), ("Lysander", "m"), ("Mungo", "m"), ("Nikodem", "m"),
    ("Osric", "m"), ("Peregrine", "m"), ("Radomir", "m"), ("Thaddeus", "m"), ("Vidar", "m"),
]
SURNAMES = ("Achterhof Birkenshaw Czerwinski Dunmore Elphick Fairbrass Grzelak Haverkamp Ingleby Jovanovski "
            "Kettleborough Lemaire Mortensen Nettleford Ostrowski Pennyfeather Quarshie Ravenhill Szabo Tregenza "
            "Underhay Villeneuve Whitlock Yardley Zamora Aldous Bramhall Coombes Devereux Estrada Fothergill "
            "Gorringe Hollingworth Iredale Kilbride").split()
DENTISTS = ["Oyewole", "Lindgren", "Petrescu", "Halloran", "Farquhar", "Mbatha", "Quennell", "Sandoval"]
GPS = ["Anand", "Brightwell", "Cavanagh", "Ionescu", "Marchetti", "Nkemelu", "Rowntree", "Valderrama"]
CARS = ["red Skoda Octavia", "grey Volvo V60", "white Toyota Yaris", "blue Kia Ceed", "black Audi A4",
        "green Renault Zoe", "silver Honda Jazz", "yellow Fiat 500", "dark blue Peugeot 308", "orange VW Up",
        "maroon Mazda 3", "white Tesla Model 3", "beige Dacia Duster", "grey Nissan Leaf", "black Mini Cooper",
        "silver Ford Focus", "red Citroen C3", "blue Subaru Outback", "green Land Rover Defender",
        "white Hyundai Ioniq", "bronze Seat Leon", "black BMW 3 Series", "grey Opel Corsa", "blue Volvo XC40",
        "red Toyota Prius", "white Suzuki Swift", "silver Kia Niro", "green Skoda Fabia"]
# (species as written in the fact, kind as an agent asks about it)
PETS = [("beagle", "dog"), ("border collie", "dog"), ("dachshund", "dog"), ("greyhound", "dog"),
        ("labrador", "dog"), ("tabby cat", "cat"), ("ginger cat", "cat"), ("Siamese cat", "cat"),
        ("rabbit", "rabbit"), ("tortoise", "tortoise"), ("budgie", "bird"), ("ferret", "ferret"),
        ("parrot", "bird"), ("guinea pig", "guinea pig")]
PET_NAMES = ["Biscuit", "Pickle", "Mochi", "Custard", "Wellington", "Nutmeg", "Pepper", "Gus", "Tofu",
             "Marmalade", "Bramble", "Ziggy", "Noodle", "Juniper", "Pip", "Clementine", "Waffles", "Dumpling",
             "Otis", "Sprocket", "Hazelnut", "Crumpet", "Figaro", "Loki", "Bagel", "Truffle"]
FOODS = ["laksa", "mushroom risotto", "pierogi", "shakshuka", "tonkotsu ramen", "seafood paella", "moussaka",
         "jollof rice", "pad thai", "fish pie", "bibimbap", "goulash", "falafel wraps", "lamb tagine",
         "khachapuri", "potato gnocchi", "pho", "cornish pasties", "dal makhani", "okonomiyaki", "ceviche",
         "beef rendang", "spanakopita", "chicken katsu curry", "cheese fondue", "pulled pork tacos"]
# (noun, adjective form)
ALLERGIES = [("peanuts", "peanut"), ("shellfish", "shellfish"), ("penicillin", "penicillin"), ("cats", "cat"),
             ("bee stings", "bee sting"), ("latex", "latex"), ("sesame", "sesame"), ("kiwi fruit", "kiwi"),
             ("dust mites", "dust mite"), ("tree nuts", "tree nut"), ("eggs", "egg"), ("grass pollen", "pollen"),
             ("wasp stings", "wasp sting"), ("mustard", "mustard"), ("horses", "horse")]
DEPARTMENTS = ["payroll", "procurement", "legal", "customer support", "facilities", "IT", "marketing",
               "research", "logistics", "quality assurance", "training", "finance"]
INSTRUMENTS = ["bass", "drums", "fiddle", "keyboards", "rhythm guitar", "saxophone", "trumpet", "banjo"]

FACT_TEMPLATES = {
    "dentist": ["{a}'s dentist is Dr {d}.", "{a} sees Dr {d} for {pos} teeth.", "Dr {d} is {a}'s dentist.",
                "{a} goes to Dr {d} for dental check-ups."],
    "gp": ["{a}'s GP is Dr {d}.", "{a} is registered with Dr {d} as {pos} family doctor.",
           "Dr {d} is {a}'s general practitioner."],
    "car": ["{a} drives {art} {car}.", "{a}'s car is {art} {car}.", "{a} gets around in {art} {car}."],
    "pet": ["{a} has a {species} called {pet}.", "{a}'s {kind} is named {pet}.", "{pet} the {species} belongs to {a}."],
    "food": ["{a}'s favourite food is {food}.", "{a} loves {food} more than any other dish.",
             "Given the choice, {a} always orders {food}."],
    "allergy": ["{a} is allergic to {noun}.", "{a} has {art} {adj} allergy.", "Allergy note: {a} must avoid {noun}."],
    "phone": ["{a}'s phone number is 07700 900{num}.", "{a}'s mobile is +44 7700 900{num}.",
              "You can reach {a} on 07700 900{num}."],
    "dept": ["{a} works in the {dept} department.", "{a} is on the {dept} team at work.",
             "At the office {a} sits with {dept}."],
    "landlord": ["{a} rents from {b}.", "{a}'s landlord is {b}.", "{b} is {a}'s landlord.", "{a} pays rent to {b}."],
    "coach": ["{b} coaches {a}.", "{a} is mentored by {b}.", "{a}'s coach is {b}.", "{b} trains {a} twice a week."],
    "neighbour": ["{a} lives next door to {b}.", "{a}'s neighbour is {b}.", "{a} and {b} are next-door neighbours."],
    "bandmate": ["{a} plays in a band with {b}.", "{a} and {b} are bandmates.", "{b} plays {instr} in {a}'s band."],
    "mother": ["{b} is {a}'s mother.", "{a}'s mum is {b}.", "{a} is {b}'s {child}."],
    "father": ["{b} is {a}'s father.", "{a}'s dad is {b}.", "{a} is {b}'s {child}."],
}
QUESTION_TEMPLATES = {
    "dentist": ["who is {x}'s dentist", "{x} dentist?", "who does {x} see for teeth", "{x}'s dentst",
                "which dentist does {x} go to"],
    "gp": ["who is {x}'s gp", "{x} family doctor?", "which gp is {x} registered with", "{x}'s gp?",
           "who's {x}'s family doc"],
    "car": ["what car does {x} drive", "{x} car?", "what does {x} drive", "{x}'s vehicle", "waht car has {x} got"],
    "pet": ["what pet does {x} have", "{x} pet?", "what's {x}'s {kind} called", "name of {x}'s {kind}",
            "{x}'s pet name"],
    "food": ["{x} fav food?", "what does {x} like to eat most", "{x}'s favourite dish", "what food does {x} love",
             "{x} favorite meal"],
    "allergy": ["{x} allergic to?", "what is {x} allergic to", "{x} allergies", "any allergies for {x}",
                "is {x} allergic to anything"],
    "phone": ["{x} phone number", "{x}'s mobile?", "how do i call {x}", "{x} number?", "whats {x}'s phone no"],
    "dept": ["what team is {x} on", "{x} dept?", "which department is {x} in", "{x}'s team at work",
             "what department does {x} work in"],
    "landlord": ["who is {x}'s landlord", "{x} landlord?", "who does {x} rent from", "who does {x} pay rent to",
                 "{x}'s landlrod"],
    "coach": ["who coaches {x}", "who trains {x}", "{x}'s mentor?", "{x} coach?", "who is {x} mentored by"],
    "neighbour": ["who is {x}'s neighbour", "{x} neighbor?", "who lives next door to {x}", "{x}'s nieghbour"],
    "bandmate": ["who is {x}'s bandmate", "who does {x} play music with", "who's in a band with {x}",
                 "{x} bandmate?"],
    "mother": ["{x}'s mum?", "who is {x}'s mother", "{x} mom?", "who's {x}'s mum"],
    "father": ["{x}'s dad?", "who is {x}'s father", "{x} father?", "who's {x}'s dad"],
}
# How many people have each attribute, and how many questions each relation gets.
ATTRIBUTES = {"dentist": 24, "gp": 20, "car": 25, "pet": 22, "food": 24, "allergy": 18, "phone": 20, "dept": 22}
QUOTA = {"dentist": 8, "gp": 6, "landlord": 8, "coach": 7, "neighbour": 6, "pet": 8, "car": 7, "food": 6,
         "allergy": 7, "phone": 5, "dept": 6, "bandmate": 5, "mother": 5, "father": 4}
TENANTS, LANDLORDS, COACHED, COACHES, NEIGHBOUR_PAIRS, BAND_PAIRS = 14, 6, 14, 7, 8, 6
PARENTS, MOTHERS_OF, FATHERS_OF = 12, 9, 7
POS = {"f": "her", "m": "his"}
CHILD = {"f": "daughter", "m": "son"}


def article(word: str) -> str:
    return "an" if word[0].lower() in "aeiou" else "a"


def generate(seed: int = 1515) -> dict:
    rng = random.Random(seed)
    gender = dict(PEOPLE)
    firsts = [p for p, _ in PEOPLE]
    linked: set[frozenset] = set()  # pairs of people that already share a fact

    def link(a: str, b: str) -> bool:
        if a == b or frozenset((a, b)) in linked:
            return False
        linked.add(frozenset((a, b)))
        return True

    # Family: an older generation of parents; children come from everyone else.
    order = firsts[:]
    rng.shuffle(order)
    parents, others = order[:PARENTS], order[PARENTS:]
    mums = [p for p in parents if gender[p] == "f"]
    dads = [p for p in parents if gender[p] == "m"]
    mother: dict[str, str] = {}
    father: dict[str, str] = {}
    for child in rng.sample(others, MOTHERS_OF):
        while not link(child, m := rng.choice(mums)):
            pass
        mother[child] = m
    for child in rng.sample(others, FATHERS_OF):
        while not link(child, f := rng.choice(dads)):
            pass
        father[child] = f

    # Landlords (asked only as "who is X's landlord") and coaches ("who coaches X").
    def one_to_many(n_subjects: int, n_objects: int) -> dict[str, str]:
        objects = rng.sample(firsts, n_objects)
        out: dict[str, str] = {}
        for a in rng.sample([p for p in firsts if p not in objects] + objects, len(firsts)):
            if len(out) == n_subjects:
                break
            choices = [b for b in objects if b != a and frozenset((a, b)) not in linked]
            if choices:
                out[a] = rng.choice(choices)
                link(a, out[a])
        return out

    landlord = one_to_many(TENANTS, LANDLORDS)
    coach = one_to_many(COACHED, COACHES)

    # Neighbours and bandmates: symmetric, disjoint pairs.
    def pairs(count: int) -> list[tuple[str, str]]:
        out, used = [], set()
        while len(out) < count:
            a, b = rng.sample(firsts, 2)
            if a in used or b in used or frozenset((a, b)) in linked:
                continue
            link(a, b)
            out.append((a, b))
            used.update((a, b))
        return out

    neighbours = pairs(NEIGHBOUR_PAIRS)
    bands = pairs(BAND_PAIRS)

    # Surnames: a child shares a surname with its father if it has one, else with its mother.
    surnames = SURNAMES[:]
    rng.shuffle(surnames)
    surname: dict[str, str] = {}
    for p in parents:
        surname[p] = surnames.pop()
    for p in others:
        surname[p] = surname[father[p]] if p in father else surname[mother[p]] if p in mother else surnames.pop()
    full = {p: f"{p} {surname[p]}" for p in firsts}

    # Per-person attributes.
    has = {rel: set(rng.sample(firsts, n)) for rel, n in ATTRIBUTES.items()}
    cars = rng.sample(CARS, len(has["car"]))
    pet_names = rng.sample(PET_NAMES, len(has["pet"]))
    foods = rng.sample(FOODS, len(has["food"]))
    numbers = rng.sample(range(100, 1000), len(has["phone"]))

    facts: list[str] = []
    answers: dict[tuple[str, str], str] = {}
    kind_of: dict[str, str] = {}

    def write(rel: str, asked: list[str], **slots) -> None:
        text = rng.choice(FACT_TEMPLATES[rel]).format(**slots)
        facts.append(text)
        for p in asked:
            assert (rel, p) not in answers, (rel, p)
            answers[(rel, p)] = text

    for p in firsts:
        a, pos = full[p], POS[gender[p]]
        if p in has["dentist"]:
            write("dentist", [p], a=a, d=rng.choice(DENTISTS), pos=pos)
        if p in has["gp"]:
            write("gp", [p], a=a, d=rng.choice(GPS), pos=pos)
        if p in has["car"]:
            car = cars.pop()
            write("car", [p], a=a, car=car, art=article(car))
        allergy = rng.choice(ALLERGIES)
        if p in has["pet"]:
            species, kind = rng.choice(PETS)
            while allergy[0] == kind + "s":  # nobody keeps a pet they are allergic to
                allergy = rng.choice(ALLERGIES)
            kind_of[p] = kind
            write("pet", [p], a=a, species=species, kind=kind, pet=pet_names.pop())
        if p in has["allergy"]:
            write("allergy", [p], a=a, noun=allergy[0], adj=allergy[1], art=article(allergy[1]))
        if p in has["food"]:
            write("food", [p], a=a, food=foods.pop())
        if p in has["phone"]:
            write("phone", [p], a=a, num=numbers.pop())
        if p in has["dept"]:
            write("dept", [p], a=a, dept=rng.choice(DEPARTMENTS))
        if p in landlord:
            write("landlord", [p], a=a, b=full[landlord[p]])
        if p in coach:
            write("coach", [p], a=a, b=full[coach[p]])
        if p in mother:
            write("mother", [p], a=a, b=full[mother[p]], child=CHILD[gender[p]])
        if p in father:
            write("father", [p], a=a, b=full[father[p]], child=CHILD[gender[p]])
    for a, b in neighbours:
        write("neighbour", [a, b], a=full[a], b=full[b])
    for a, b in bands:
        write("bandmate", [a, b], a=full[a], b=full[b], instr=rng.choice(INSTRUMENTS))
    assert len({t.lower() for t in facts}) == len(facts)
    rng.shuffle(facts)

    cases = []
    for rel, n in QUOTA.items():
        asked = rng.sample(sorted(p for r, p in answers if r == rel), n)
        for p in asked:
            x = rng.choice([full[p], p, full[p].lower(), p.lower()])
            question = rng.choice(QUESTION_TEMPLATES[rel]).format(x=x, kind=kind_of.get(p, "pet"))
            cases.append({"question": question, "expected": [answers[(rel, p)]]})
    rng.shuffle(cases)
    assert len({c["question"].lower() for c in cases}) == len(cases)

    return {
        "name": "relations2",
        "description": f"Second templated relation set (a different generator from relations): {len(facts)} "
        f"everyday-life facts about {len(firsts)} invented people (dentist, GP, car, pet, favourite food, allergy, "
        f"phone number, department; landlord, coach/mentor, neighbour, bandmate, mother, father; several templates "
        f"each, most people both subject and object) and {len(cases)} terse agent questions (landlord/rent from, "
        f"coach/trains/mentor, mum/mom/mother, dentist/teeth, GP/family doctor, full or first name, lower case, "
        f"the odd typo), each answered by exactly one fact (seed {seed}). "
        f"Written before the stop-15 ranking work; unseen.",
        "facts": [{"text": t, "type": "fact", "source": "relations"} for t in facts],
        "cases": cases,
    }


if __name__ == "__main__":
    print(json.dumps(generate(), indent=1))
