// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.conntrack;

import io.kubeverdict.policy.IpAddress;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.Enumeration;
import java.util.HashSet;
import java.util.Set;

/**
 * The addresses of this network namespace's own interfaces: a connection opened from one of them
 * was opened by the node (through the output hook, never queued, never judged), so re-judging
 * leaves it alone as the data plane does.
 */
@FunctionalInterface
public interface LocalAddresses {
    Set<IpAddress> get();

    /** Read from the interfaces of the process's network namespace on every call. */
    LocalAddresses INTERFACES = () -> {
        Set<IpAddress> out = new HashSet<>();
        try {
            Enumeration<NetworkInterface> nics = NetworkInterface.getNetworkInterfaces();
            while (nics != null && nics.hasMoreElements()) {
                Enumeration<InetAddress> addresses = nics.nextElement().getInetAddresses();
                while (addresses.hasMoreElements()) {
                    String text = addresses.nextElement().getHostAddress();
                    int scope = text.indexOf('%');
                    IpAddress a = IpAddress.tryParse(scope < 0 ? text : text.substring(0, scope));
                    if (a != null) {
                        out.add(a);
                    }
                }
            }
        } catch (SocketException e) {
            throw new IllegalStateException("cannot list this node's interfaces", e);
        }
        return out;
    };
}
