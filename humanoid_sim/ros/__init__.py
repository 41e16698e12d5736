"""ROS 2 adapter of humanoid_sim: the only package that imports rclpy (sim_node, conversions, validation)."""
