"""The real clusters (tests/cluster/clusters.py), once per session (per xdist worker), shared by every
test marked slurm or ray."""
import pytest


@pytest.fixture(scope="session")
def slurm_cluster(tmp_path_factory):
    from tests.cluster.clusters import slurm_cluster_fixture
    yield from slurm_cluster_fixture(tmp_path_factory)


@pytest.fixture(scope="session")
def ray_cluster(tmp_path_factory):
    from tests.cluster.clusters import ray_cluster_fixture
    yield from ray_cluster_fixture(tmp_path_factory)
