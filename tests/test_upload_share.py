"""server.upload_share: one address can't hold the server's upload ceiling against a newcomer."""

from server.upload_share import Held, make_room

MIB = 2**20
CEILING = 512 * MIB


def filled_by_one_address(sessions: int = 8, per_session: int = 2) -> tuple[list[Held], dict[str, str]]:
    """One address's sessions, each holding 31 MiB files, oldest first: 496 MiB."""
    files = [Held(f"attacker {s}", f"f{s}.{i}", 31 * MIB) for i in range(per_session) for s in range(sessions)]
    return files, {f"attacker {s}": "10.0.0.66" for s in range(sessions)}


def test_a_file_that_fits_evicts_nothing():
    files, addresses = filled_by_one_address()
    assert make_room(files, addresses, "newcomer", 16 * 2**10, CEILING) == []


def test_a_newcomers_small_file_evicts_the_largest_address_s_oldest_file():
    files, addresses = filled_by_one_address()
    addresses["newcomer"] = "10.0.0.7"
    evicted = make_room(files, addresses, "newcomer", 17 * MIB, CEILING)
    assert [f.file_id for f in evicted] == ["f0.0"]
    assert sum(f.nbytes for f in files) - 31 * MIB + 17 * MIB <= CEILING


def test_a_newcomer_from_the_same_address_gets_room_from_its_largest_session():
    files, addresses = filled_by_one_address()  # a NAT'd classroom: one address, many sessions
    addresses["student"] = "10.0.0.66"
    files.append(Held("student", "mine", 1 * MIB))
    evicted = make_room(files, addresses, "student", 16 * MIB, CEILING)
    assert len(evicted) == 1 and evicted[0].session.startswith("attacker")


def test_a_session_without_a_known_address_counts_as_one_unknown_address():
    files, _ = filled_by_one_address()  # scripts that never ran a page: all one address, ""
    assert make_room(files, {}, "newcomer", 31 * MIB, CEILING)


def test_the_largest_holder_is_refused_instead_of_evicting_smaller_ones():
    files = [Held("small", "s", 200 * MIB), Held("big", "b1", 300 * MIB)]
    addresses = {"small": "a", "big": "b"}
    assert make_room(files, addresses, "big", 31 * MIB, CEILING) == []  # it would hold the most: it waits
    assert [f.file_id for f in make_room(files, addresses, "small", 31 * MIB, CEILING)] == ["b1"]


def test_eviction_stops_as_soon_as_the_file_fits_and_never_below_the_newcomer():
    files = [Held(f"s{i}", f"f{i}", 100 * MIB) for i in range(5)]  # 500 MiB, five addresses of 100
    addresses = {f"s{i}": f"c{i}" for i in range(5)} | {"new": "cn"}
    assert make_room(files, addresses, "new", 99 * MIB, CEILING) != []
    assert make_room(files, addresses, "new", 100 * MIB, CEILING) == []  # it would hold as much as each of them
