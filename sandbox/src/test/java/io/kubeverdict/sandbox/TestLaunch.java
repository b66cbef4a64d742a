// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

/** Lets the sandbox start the control plane, agents and `matrix` from the test class path. */
final class TestLaunch {
    private TestLaunch() {}

    static void useTestClassPath() {
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        System.setProperty(Launcher.CLASSPATH_PROPERTY, cp);
    }
}
