"""humanoid_sim: rigid-contact humanoid simulation (seed 000 virtual links) with a ROS 2 node."""

