"""ament_python build of humanoid_sim: the library, its nodes, and the share/ data files."""

from glob import glob

from setuptools import find_packages, setup

PACKAGE = "humanoid_sim"


def share(folder: str, pattern: str) -> tuple[str, list[str]]:
    """Install every file of `folder` matching `pattern` under share/humanoid_sim/folder."""
    return (f"share/{PACKAGE}/{folder}", sorted(glob(f"{folder}/{pattern}")))


setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(include=[PACKAGE, f"{PACKAGE}.*"]),
    package_data={PACKAGE: ["py.typed"]},
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        share("launch", "*.launch.py"),
        share("urdf", "*.urdf"),
        share("config", "*.*"),
    ],
    install_requires=["setuptools"],
    extras_require={"test": ["pytest"]},
    zip_safe=True,
    maintainer="humanoid_sim developers",
    maintainer_email="humanoid-sim@example.com",
    description="Rigid-contact humanoid simulation for ROS 2 (virtual-link contacts, ZMP).",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "sim_node = humanoid_sim.ros.sim_node:main",
            "smoke_publisher = humanoid_sim.ros.smoke_publisher_node:main",
            "walking_controller = humanoid_sim.ros.walking_controller_node:main",
            "humanoid_sim = humanoid_sim.campaign.cli:main",
        ],
    },
)
