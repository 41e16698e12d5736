"""ament_python build of humanoid_sim: the library, its nodes, and the share/ data files.

The data files (launch/, urdf/, config/) are installed twice: under share/humanoid_sim (where
colcon, the ament index and ``ros2 launch`` look) and inside the Python package as
``humanoid_sim/share`` (so that a plain ``pip install``, wherever it puts the package, finds
them through importlib.resources; see humanoid_sim/package_data.py).
"""

import shutil
from glob import glob
from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

PACKAGE = "humanoid_sim"
SHARED = [("launch", "*.launch.py"), ("urdf", "*.urdf"), ("config", "*.*"), ("config/worlds", "*.yaml")]


def share(folder: str, pattern: str) -> tuple[str, list[str]]:
    """Install every file of `folder` matching `pattern` under share/humanoid_sim/folder."""
    return (f"share/{PACKAGE}/{folder}", sorted(glob(f"{folder}/{pattern}")))


class BuildWithPackageData(build_py):
    """build_py, plus a copy of the share/ data files into the built package (humanoid_sim/share)."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:  # an editable install reads the source tree's files
            return
        for folder, pattern in SHARED:
            target = Path(self.build_lib) / PACKAGE / "share" / folder
            target.mkdir(parents=True, exist_ok=True)
            for source in sorted(glob(f"{folder}/{pattern}")):
                shutil.copy2(source, target / Path(source).name)


setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(include=[PACKAGE, f"{PACKAGE}.*"]),
    package_data={PACKAGE: ["py.typed"]},
    cmdclass={"build_py": BuildWithPackageData},
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        *(share(folder, pattern) for folder, pattern in SHARED),
    ],
    install_requires=["setuptools"],
    extras_require={"test": ["pytest"]},
    zip_safe=False,
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
