// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.console;

import java.net.InetSocketAddress;

/**
 * Who asks the console: the browser's {@code Authorization} header (null without one) and the
 * address its connection came from. Both go to the inspection service with every call, which
 * decides exactly as for a gRPC client.
 */
public record Viewer(String authorization, InetSocketAddress peer) {}
