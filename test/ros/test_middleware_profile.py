"""The Fast DDS profile the node's launcher applies when the user configured none
(middleware_profile): plain environment mappings, no rclpy."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from humanoid_sim.package_data import package_file
from humanoid_sim.ros.middleware_profile import (
    PROFILE_FILE,
    PROFILE_VARIABLES,
    USE_QOS_FROM_XML,
    use_packaged_profile,
)


def test_applied_when_nothing_is_configured(tmp_path):
    environ = {"RMW_IMPLEMENTATION": "rmw_fastrtps_cpp"}
    choice = use_packaged_profile(environ, tmp_path)
    assert choice.applied
    assert environ["FASTDDS_DEFAULT_PROFILES_FILE"] == str(package_file(PROFILE_FILE))
    assert "FASTRTPS_DEFAULT_PROFILES_FILE" not in environ  # Fast DDS 3 warns that it is deprecated
    assert environ[USE_QOS_FROM_XML] == "1"
    assert str(package_file(PROFILE_FILE)) in choice.reason


def test_fast_dds_2_distributions_get_the_variable_they_read(tmp_path):
    environ = {"ROS_DISTRO": "jazzy"}  # RMW_IMPLEMENTATION unset: the default, Fast DDS
    assert use_packaged_profile(environ, tmp_path).applied
    assert environ["FASTRTPS_DEFAULT_PROFILES_FILE"] == str(package_file(PROFILE_FILE))
    assert "FASTDDS_DEFAULT_PROFILES_FILE" not in environ


@pytest.mark.parametrize("variable", [*PROFILE_VARIABLES, USE_QOS_FROM_XML])
def test_the_users_configuration_is_kept(tmp_path, variable):
    environ = {variable: "/home/user/my_profiles.xml" if variable != USE_QOS_FROM_XML else "0"}
    before = dict(environ)
    choice = use_packaged_profile(environ, tmp_path)
    assert not choice.applied and environ == before
    assert variable in choice.reason


@pytest.mark.parametrize("name", ["DEFAULT_FASTDDS_PROFILES.xml", "DEFAULT_FASTRTPS_PROFILES.xml"])
def test_a_profiles_file_in_the_working_directory_is_kept(tmp_path, name):
    (tmp_path / name).write_text("<dds/>")
    environ: dict[str, str] = {}
    choice = use_packaged_profile(environ, tmp_path)
    assert not choice.applied and environ == {}
    assert name in choice.reason


def test_other_middleware_is_left_alone(tmp_path):
    environ = {"RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp"}
    choice = use_packaged_profile(environ, tmp_path)
    assert not choice.applied and environ == {"RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp"}
    assert "rmw_cyclonedds_cpp" in choice.reason


def test_the_profile_frees_received_samples_and_keeps_the_rest_as_rmw_sets_it():
    root = ET.parse(package_file(PROFILE_FILE)).getroot()
    ns = {"dds": root.tag.split("}")[0].strip("{")}
    profiles = root.find("dds:profiles", ns)
    subscriber = profiles.find("dds:subscriber[@is_default_profile='true']", ns)
    publisher = profiles.find("dds:publisher[@is_default_profile='true']", ns)
    assert subscriber.find("dds:historyMemoryPolicy", ns).text == "DYNAMIC"
    assert publisher.find("dds:historyMemoryPolicy", ns).text == "PREALLOCATED_WITH_REALLOC"
    assert publisher.find("dds:qos/dds:publishMode/dds:kind", ns).text == "ASYNCHRONOUS"
    for endpoint in (publisher, subscriber):  # on, /clock reached another process twice at times
        assert endpoint.find("dds:qos/dds:data_sharing/dds:kind", ns).text == "OFF"


def test_service_answers_wait_for_their_client_and_keep_the_default_publisher_settings():
    """rmw_fastrtps gives service response writers the profile named "service" instead of the
    default one, and drops an answer to a client not matched within its max_blocking_time."""
    root = ET.parse(package_file(PROFILE_FILE)).getroot()
    ns = {"dds": root.tag.split("}")[0].strip("{")}
    profiles = root.find("dds:profiles", ns)
    default = profiles.find("dds:publisher[@is_default_profile='true']", ns)
    service = profiles.find("dds:publisher[@profile_name='service']", ns)
    for setting in ("historyMemoryPolicy", "qos/dds:publishMode/dds:kind", "qos/dds:data_sharing/dds:kind"):
        assert service.find(f"dds:{setting}", ns).text == default.find(f"dds:{setting}", ns).text
    blocking = service.find("dds:qos/dds:reliability/dds:max_blocking_time", ns)
    seconds = int(blocking.find("dds:sec", ns).text) + 1e-9 * int(blocking.find("dds:nanosec", ns).text)
    assert seconds >= 1.0  # Fast DDS's own 100 ms runs out while discovery lags on a loaded machine
