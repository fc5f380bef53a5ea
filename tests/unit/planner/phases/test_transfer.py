"""Transfer worked by hand: a link at its efficiency, the object-store round trip with egress,
shipped drives. 1,000 x 1,000 tokens x 40,964 bytes (Qwen3-8B, seed-article layout) = 40.964e9 bytes."""
import pytest

from planner import Scenario, plan
from planner.phases.transfer import transfer_assumptions
from planner.presets.specs import link_efficiency
from planner.scenario import Costs, Transfer, UniformMix


def moved(transfer: Transfer, storage: str = "network-volume"):
    return plan(Scenario(uniform=UniformMix(samples=1000, tokens=1000), max_seq_len=None, regenerate=False,
                         model="qwen3-8b", layout="seed-article", compression=1.0, transfer=transfer,
                         costs=Costs(storage=storage)))


def test_link_at_its_efficiency():
    p = moved(Transfer(method="link", link_gbps=8, efficiency=0.5))
    # 8 Gb/s = 1e9 bytes/s x 0.5 = 0.5e9 bytes/s: 40.964e9 / 0.5e9 = 81.928 s = 0.0227578 h
    assert p.transfer_hours == pytest.approx(81.928 / 3600, rel=1e-12)
    # no egress price given on a link: nothing charged
    assert p.cost_usd.transfer == 0


def test_object_store_round_trip_pays_egress():
    p = moved(Transfer(method="object_store", link_gbps=8, efficiency=0.5), storage="s3")
    # upload and download: 2 x 81.928 s = 163.856 s
    assert p.transfer_hours == pytest.approx(163.856 / 3600, rel=1e-12)
    # S3 egress (hardware.yaml) $0.09/GB on the download: 40.964 GB x 0.09 = $3.68676
    assert p.cost_usd.transfer == pytest.approx(3.68676, rel=1e-9)
    # the default link efficiency (hardware.yaml parallel 0.5) is the same as above
    assert moved(Transfer(method="object_store", link_gbps=8), storage="s3").transfer_hours == \
        pytest.approx(163.856 / 3600, rel=1e-12)


def test_link_with_an_egress_price_and_drives():
    p = moved(Transfer(method="link", link_gbps=100, efficiency=0.8, egress_usd_per_gb=0.02))
    # 100 Gb/s = 12.5e9 B/s x 0.8 = 10e9 B/s: 4.0964 s; 40.964 GB x $0.02 = $0.81928
    assert p.transfer_hours == pytest.approx(4.0964 / 3600, rel=1e-12)
    assert p.cost_usd.transfer == pytest.approx(0.81928, rel=1e-9)
    assert moved(Transfer(method="drives", drive_days=2.5)).transfer_hours == 60
    assert moved(Transfer(method="none")).transfer_hours == 0


def test_the_transfer_row_pairs_the_efficiency_with_the_links_preset():
    link = link_efficiency()          # hardware.yaml link_efficiency: 0.5, with its source
    [a] = transfer_assumptions(Transfer(method="link", link_gbps=10))
    assert (a.name, a.value, a.tag, a.source) == ("transfer", "link: 10 Gb/s x 0.5 efficiency", "estimate",
                                                  link["source"])
    [a] = transfer_assumptions(Transfer(method="object_store", link_gbps=8, efficiency=0.7))
    assert (a.value, a.tag) == ("object_store: 8 Gb/s x 0.7 efficiency", "yours")
    assert a.source == f"set in the scenario; the preset's 0.5: {link['source']}"
    [a] = transfer_assumptions(Transfer(method="drives", drive_days=2.5))
    assert (a.value, a.tag) == ("shipped drives, 2.5 days", "yours")
    assert transfer_assumptions(Transfer(method="none")) == []      # nothing crosses: no row
