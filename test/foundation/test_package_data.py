"""Finding the package's data files: the source tree from a checkout; an error naming every place
searched. The suite may run on the installed copy (test/package_under_test.py): the checkout's
case then puts the checkout beside the module, as it is for a package imported from one."""

from pathlib import Path

import pytest

from humanoid_sim import package_data
from humanoid_sim.errors import DataFileNotFoundError, HumanoidSimError
from humanoid_sim.package_data import package_file, share_directories

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def from_checkout(monkeypatch):
    monkeypatch.setattr(package_data, "SOURCE_ROOT", REPO)


def test_from_the_source_tree_the_tree_copy_is_used(from_checkout):
    assert share_directories()[0] == ("source tree", REPO)
    assert package_file("config/initial_poses.yaml") == REPO / "config" / "initial_poses.yaml"
    assert package_file("urdf/humanoid.urdf").is_file()


def test_a_missing_file_says_where_it_looked(from_checkout):
    with pytest.raises(DataFileNotFoundError) as caught:
        package_file("config/no_such_file.yaml")
    error = caught.value
    assert isinstance(error, FileNotFoundError) and isinstance(error, HumanoidSimError)
    assert error.relative == "config/no_such_file.yaml"
    assert len(error.searched) == len(share_directories())
    message = str(error)
    assert message.startswith("humanoid_sim data file 'config/no_such_file.yaml' not found; searched: ")
    assert str(REPO / "config" / "no_such_file.yaml") + " (source tree)" in message
    assert "(package data)" in message and "(pip data files)" in message


def test_outside_a_checkout_the_package_data_copy_is_found(tmp_path, monkeypatch):
    # What an installed package sees: no package.xml beside it, its own humanoid_sim/share.
    monkeypatch.setattr(package_data, "SOURCE_ROOT", tmp_path)
    monkeypatch.setattr(package_data, "_ament_share", lambda: None)
    packaged = Path(package_data.__file__).parent / package_data.PACKAGE_DATA_FOLDER
    how = [h for h, _ in share_directories()]
    assert how == ["package data", "pip data files"]
    assert share_directories()[0][1] == packaged
