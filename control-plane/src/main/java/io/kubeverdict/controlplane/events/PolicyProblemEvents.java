// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.events;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kubeverdict.controlplane.calc.AdminPolicyKind;
import io.kubeverdict.controlplane.calc.PolicyProblem;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns the engine's policy problems into Kubernetes Warning Events on the policy (NetworkPolicy,
 * or an admin-tier kind: those events go to namespace "default"), so that `kubectl describe`
 * shows why (part of) a policy matches nothing or was narrowed. Each problem is
 * reported once while it lasts; posting happens off the event thread.
 */
public final class PolicyProblemEvents implements Consumer<List<PolicyProblem>>, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PolicyProblemEvents.class);
    public static final String REASON = "UnusablePolicy";
    public static final String COMPONENT = PolicyEvent.COMPONENT;

    private final KubernetesClient client;
    private final ExecutorService posting = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "k8s-events");
        t.setDaemon(true);
        return t;
    });
    private Set<PolicyProblem> reported = Set.of(); // event thread only
    private volatile BooleanSupplier poster = () -> true;

    public PolicyProblemEvents(KubernetesClient client) {
        this.client = client;
    }

    /**
     * Posts only while {@code writer} says so (the writer Lease's holder): a problem that appears
     * while another replica writes is that replica's to post.
     */
    public void postOnlyWhile(BooleanSupplier writer) {
        poster = writer;
    }

    /** Called with the full current list whenever it changes; posts only the new problems. */
    @Override
    public void accept(List<PolicyProblem> problems) {
        Set<PolicyProblem> now = new HashSet<>(problems);
        for (PolicyProblem p : problems) {
            if (!reported.contains(p)) {
                log.warn("policy problem: {}", p);
                if (poster.getAsBoolean()) {
                    posting.execute(() -> post(p));
                }
            }
        }
        reported = now;
    }

    private void post(PolicyProblem p) {
        AdminPolicyKind admin = p.adminKind();
        try {
            new PolicyEvent(
                            admin == null ? "networking.k8s.io/v1" : admin.apiVersion(),
                            p.kind(),
                            admin == null ? p.namespace() : null,
                            p.name(),
                            "Warning",
                            REASON,
                            p.field() + ": " + p.message())
                    .post(client);
        } catch (RuntimeException ex) {
            log.warn("could not post event for {}: {}", p, ex.toString());
        }
    }

    @Override
    public void close() {
        posting.shutdown();
    }
}
